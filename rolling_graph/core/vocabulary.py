"""Words the graph recognises as names of technologies, shared by the text analysis that finds
them (:mod:`rolling_graph.capture.entities`) and the restore block that lists them. Stdlib
only, no regular expression: the hook loads it.
"""

from __future__ import annotations

#: Well-known technology names worth recognising even in lower case.
TECH = frozenset(
    """postgres postgresql pgvector sqlite mysql redis mongodb kafka rabbitmq docker kubernetes k8s terraform
    react vue svelte nextjs django flask fastapi rails express node nodejs deno bun python rust golang java
    typescript javascript graphql grpc rest oauth jwt stripe resend bento sendgrid twilio s3 aws gcp azure
    vercel netlify heroku nginx celery pytest jest vitest playwright webpack vite pydantic sqlalchemy alembic
    prisma drizzle supabase firebase ollama anthropic openai haiku claude git github gitlab ci cron systemd
    elasticsearch opensearch clickhouse duckdb pandas numpy tokio axum htmx tailwind""".split()
)


#: Words after which a decision's "Use" is no choice but a fragment: "Use instead of guessing",
#: "Use can we add a test", "Use Also 80 is not that much".
_FRAGMENT_AFTER_USE = frozenset("instead can also is are to of for with and it its this that we you if when".split())
#: Second words of an imperative that instructs rather than chooses: "Put your brief here".
_NOT_THE_CHOICE = frozenset("your my his her their me him them us".split())
#: Words a sentence cut short ends on: "Make Detect() deterministic by".
_DANGLING = frozenset("by to of for with the a an and or in on at from into than".split())
#: Words that pick one of a list by its number: "Use option 4 now".
_BY_NUMBER = frozenset({"option", "options", "approach", "variant"})
#: How narration and status lines open: "I see the issue", "Complete and all tests pass".
_NARRATION = ("i see", "i found", "i notice", "i can see", "let me", "now ", "complete", "done", "good", "great", "perfect",
              "all tests", "looks good", "here's", "here is", "the issue", "the problem", "this is")


def not_a_decision(label: str) -> str | None:
    """Why ``label`` is no decision's label (a plain sentence that states a choice), or None:
    a heading or emphasis (``## Plan: …``, ``**Critical Issue**: …``), a title ending in a
    colon, a fragment (``Use instead of guessing``), narration or a status line, one word."""
    text = " ".join(label.split())
    low = text.lower()
    if "**" in text or text.startswith("#") or text.endswith(":") or "`" in text[:1]:
        return "a heading or emphasis"
    head, colon, rest = text.partition(": ")
    if colon and rest and len(head.split()) <= 3 and head[:1].isupper() and not any(c in head for c in "()/._"):
        return "a title"
    words = low.strip(" .!").split()
    if len(words) < 2:
        return "one word"
    if words[0] == "[correction]":
        words = words[1:] or ["?"]
    if words[0] == "use" and len(words) > 1 and (words[1] in _FRAGMENT_AFTER_USE or "is" in words[2:4]):
        return "a fragment"
    if words[1] in _NOT_THE_CHOICE or words[:3] == ["keep", "in", "mind"]:
        return "an instruction"  # "Put your brief here", "Keep in mind that…": no choice between alternatives
    if not _BY_NUMBER.isdisjoint(words[:4]) and any(
            w in _BY_NUMBER and i + 1 < len(words) and words[i + 1].strip("#.,)").isdigit() for i, w in enumerate(words[:4])):
        return "an option by number"  # "Use option 4 now": says nothing without the options it picks from
    if "or" in words[1:-1] and "either" not in words:
        return "undecided"  # "Increase this limit or change the approach": no choice made yet
    if words[-1] in _DANGLING:
        return "a fragment"
    if low.startswith(_NARRATION):
        return "narration"
    return None
