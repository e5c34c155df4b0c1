"""The project's own redaction rules: provider token formats and credential assignments.

Stdlib only (``re``, compiled lazily): the hook process may import this module, and it is
what the hook can afford for prompts (:func:`rolling_graph.safety.redact.redact_fast`). The
detached processes add the secret-detection library on top
(:mod:`rolling_graph.safety.secrets_library`); ``bench/bench_redact.py`` measures what each adds.

How it stays fast: every rule names a few lowercase *keywords*; a rule takes part only
when one of its keywords occurs in the text (an empty keyword: always), and the rules
that take part are compiled into one alternation (cached per set of rules), so the text
is scanned once.

Replacements read ``[REDACTED:<rule-name>]``. Rules that recognise an assignment
(``PASSWORD=...``, ``"api_key": "..."``, ``postgres://user:pw@host``) keep the key and
replace only the value, so the model still sees *that* a credential was configured.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

__all__ = ["RULES", "Rule", "redact_secrets", "rule_names"]


class Rule:
    """One redaction rule (a plain class: ``dataclasses`` costs the hook ~10 ms to import).

    * ``name`` — shown in the replacement, ``[REDACTED:<name>]``
    * ``pattern`` — regex; a named group ``secret`` marks the part to replace (else the whole match)
    * ``keywords`` — lowercase literals; the rule runs only when one occurs in the lowercased text
    * ``flags`` — scoped inline flags for this rule only, e.g. ``"i"``
    """

    __slots__ = ("name", "pattern", "keywords", "flags")

    def __init__(self, name: str, pattern: str, keywords: tuple[str, ...], flags: str = "") -> None:
        self.name = name
        self.pattern = pattern
        self.keywords = keywords
        self.flags = flags

    def __repr__(self) -> str:
        return f"Rule({self.name!r})"


# Values of assignments: a quoted string, or a bare token up to whitespace/delimiter.
# (Up to 4,096 characters: a 1Password service account token alone is ~900; a value cut
# short would leave its tail in the text.)
_QUOTED = r"""(?:"[^"\n]{1,4096}"|'[^'\n]{1,4096}'|`[^`\n]{1,4096}`)"""
_BARE = r"""[^\s"'`,;#]{1,4096}"""
# Key segments that mark an environment variable as secret (whole ``_``-separated words).
_ENV_SECRET_WORD = (
    r"(?:PASSWORD|PASSWD|PASSPHRASE|PWD|SECRET|SECRETS|TOKEN|CREDENTIALS?|PRIVATE|"
    r"(?:API|SECRET|PRIVATE|ACCESS|ENCRYPTION|SIGNING|MASTER|LICENSE|SESSION|AUTH|APP)_?KEY|"
    r"APIKEY|AUTH|DSN|SALT)"
)

# A key naming a credential: one of these words as part of it (``datadog_api_token``,
# ``clientSecret``, ``DB_PASSWORD``); ``key`` only in the combinations that mean a secret.
_SECRET_KEY_WORD = (
    r"(?:token|secret|passw(?:or)?d|pwd|passphrase|credentials?|"
    r"(?:api|access|private|signing|encryption|master|client|auth|session|app|account|license|iam)[_\-]?key)"
)
# A value that looks like a credential rather than code: quoted (not a template, variable,
# placeholder or file name), or bare with at least two digits and a letter, no dots, 16+ chars.
_CREDENTIAL_VALUE = (
    r"\"(?![$%{<*#])(?=[^\"\n]*[A-Za-z0-9])(?![^\"\n]*\.[A-Za-z]{1,5}\")(?![^\"\n]*\s)[^\"\n]{8,512}\""
    r"|'(?![$%{<*#])(?=[^'\n]*[A-Za-z0-9])(?![^'\n]*\.[A-Za-z]{1,5}')(?![^'\n]*\s)[^'\n]{8,512}'"
    r"|(?=[^\s\"',;]*[A-Za-z])(?=(?:[^\s\"',;\d]*\d){2})(?![a-z]+(?:_[a-z0-9]+)+\b)"
    r"[A-Za-z0-9+/=_\-~!@#%^&*]{16,512}(?![^\s\"',;)}\]])"
)

RULES: tuple[Rule, ...] = (
    # --- Blocks and structured credentials (most specific first) ---------------------
    Rule(
        "private-key",
        r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,20000}?"
        r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        # No END (the text was cut): take the key-looking lines that follow.
        r"|-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----[A-Za-z0-9+/=:,\- \t\r\n]*",
        ("private key",),
    ),
    Rule(
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]*)?",  # two-part (alg none) too
        ("eyj",),
    ),
    Rule(
        "database-url",
        r"\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|sqlserver|"
        r"cockroachdb|clickhouse|oracle|jdbc:[a-z]+)(?:\+[a-z0-9]+)?://[^\s:/@'\"\[]{0,128}:(?P<secret>[^\s@/'\"]{1,256})@",
        ("://",),
        "i",
    ),
    Rule(
        "url-password",
        r"\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@'\"\[]{1,128}:(?P<secret>[^\s@/'\"]{1,256})@",
        ("://",),
        "i",
    ),
    Rule(
        "url-secret-param",
        r"[?&;](?:password|passwd|pwd|token|access_token|refresh_token|api_key|apikey|client_secret|secret|sig)="
        r"(?P<secret>[^&\s'\"#]{3,})",
        ("password=", "passwd=", "pwd=", "token=", "api_key=", "apikey=", "secret=", "sig="),
        "i",
    ),
    Rule(
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}",
        ("hooks.slack.com",),
    ),
    Rule(
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{20,}",
        ("/api/webhooks/",),
    ),
    # --- Provider tokens with recognisable prefixes ---------------------------------
    Rule("anthropic-key", r"\bsk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    Rule("openai-key", r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}", ("sk-",)),
    Rule("openai-key", r"\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b", ("t3blbkfj",)),
    Rule("openai-key", r"\bsk-[A-Za-z0-9]{40,}\b", ("sk-",)),
    Rule("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}", ("aiza",)),
    Rule("google-oauth-token", r"\bya29\.[0-9A-Za-z_\-]{20,}", ("ya29.",)),
    Rule("google-client-secret", r"\bGOCSPX-[A-Za-z0-9_\-]{24,}", ("gocspx-",)),
    Rule("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}", ("_live_", "_test_")),
    Rule("stripe-webhook-secret", r"\bwhsec_[A-Za-z0-9]{24,}", ("whsec_",)),
    Rule("twilio-api-key", r"\bSK[0-9a-fA-F]{32}\b", ("sk",)),
    Rule("sendgrid-key", r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,64}", ("sg.",)),
    Rule("slack-token", r"\bxox[abposcer]-[0-9A-Za-z\-]{10,}", ("xox",)),
    Rule("slack-app-token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", ("xapp-",)),
    Rule("github-token", r"\bgh[pousr]_[A-Za-z0-9]{30,}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    Rule("github-token", r"\bgithub_pat_[A-Za-z0-9_]{22,}", ("github_pat_",)),
    Rule(
        "gitlab-token",
        r"\bgl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent|oas)-[0-9A-Za-z_\-]{20,}|\bGR1348941[0-9A-Za-z_\-]{20,}",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glsoat-", "glft-", "glimt-", "glagent-", "gloas-", "gr1348941"),
    ),
    Rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    Rule("pypi-token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{20,}", ("pypi-",)),
    Rule("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b", ("hf_",)),
    Rule("huggingface-token", r"\bapi_org_[A-Za-z0-9]{30,}\b", ("api_org_",)),
    Rule("azure-storage-key", r"\bAccountKey=(?P<secret>[A-Za-z0-9+/]{40,}={0,2})", ("accountkey=",)),
    Rule("azure-sas-signature", r"\bSharedAccessSignature=(?P<secret>[^;\s'\"]{10,})", ("sharedaccesssignature",)),
    Rule("azure-client-secret", r"\b[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}", ("q~",)),
    Rule(
        "aws-access-key-id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|A3T[A-Z0-9])[A-Z0-9]{16}\b",
        ("akia", "asia", "abia", "acca", "aida", "aroa", "a3t"),
    ),
    Rule(
        "aws-secret-access-key",
        r"\baws_?(?:secret_?access_?key|secret_?key|session_?token|access_?key)[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40,})",
        ("aws",),
        "i",
    ),
    Rule(
        "aws-secret-access-key",
        r"\bSecretAccessKey[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40,})",
        ("secretaccesskey",),
    ),
    Rule("digitalocean-token", r"\bdo[por]_v1_[a-f0-9]{64}\b", ("_v1_",)),
    Rule("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", ("shp",)),
    Rule("mailgun-key", r"\b(?:pub)?key-[0-9a-f]{32}\b", ("key-",)),
    Rule("mailchimp-key", r"\b[0-9a-f]{32}-us\d{1,2}\b", ("-us",)),
    Rule("square-token", r"\bsq0(?:atp|csp)-[0-9A-Za-z_\-]{22,60}", ("sq0",)),
    Rule("square-token", r"\bEAAA[0-9A-Za-z_\-]{56,}", ("eaaa",)),
    Rule("grafana-token", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}", ("glsa_", "glc_")),
    Rule("newrelic-key", r"\bNR(?:AK|II|JS|AA)-[A-Z0-9]{20,}\b", ("nrak-", "nrii-", "nrjs-", "nraa-")),
    Rule("atlassian-token", r"\bATATT3[A-Za-z0-9_\-=]{50,}", ("atatt3",)),
    Rule("pulumi-token", r"\bpul-[a-f0-9]{40}\b", ("pul-",)),
    Rule(
        "discord-bot-token",
        r"(?<![\w.\-])[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![\w\-])",
        ("",),  # no literal to key on: always takes part (cheap, anchored on [MNO])
    ),
    # 1Password service account tokens: ``ops_`` + base64url of a JSON object.
    Rule("onepassword-token", r"\bops_eyJ[A-Za-z0-9_\-+/]{60,}={0,3}", ("ops_eyj",)),
    # JFrog Artifactory API keys (``AKC`` + 70) and encrypted passwords (``AP`` + hex digit + 40+).
    Rule("artifactory-key", r"(?<![A-Za-z0-9])AKC[A-Za-z0-9]{60,}(?![A-Za-z0-9])", ("akc",)),
    Rule("artifactory-key", r"(?<![A-Za-z0-9])AP[0-9A-F](?=(?:[A-Za-z]*[0-9]){2})[A-Za-z0-9]{40,}(?![A-Za-z0-9])", ("ap",)),
    # SoftLayer's SOAP/REST endpoint takes the API key as a path segment.
    Rule("softlayer-key", r"api\.softlayer\.com/(?:soap|rest)/v3(?:\.1)?/(?P<secret>[a-z0-9]{64})", ("api.softlayer.com",), "i"),
    # A Twilio Account SID, then (on the same line) a 32-hex auth token.
    Rule("twilio-auth-token", r"\bAC[0-9a-f]{32}\b[^\n]{0,80}?(?<![0-9A-Za-z])(?P<secret>[0-9a-f]{32})(?![0-9A-Za-z])", ("ac",)),
    # A credential as a path segment: ``…/apikey-<40+ random>``, ``…/api_key_<64>`` (an IBM
    # Cloud key file, a SoftLayer key): the name says what follows, and the value has digits.
    Rule(
        "path-credential",
        r"(?i:api[_\-]?key|apikey|access[_\-]?key|secret[_\-]?key|auth[_\-]?token)[_\-]"
        r"(?P<secret>(?![a-z]+(?:[_\-][a-z]+)*(?![A-Za-z0-9_\-]))(?=(?:[A-Za-z_\-]*[0-9]){2})[A-Za-z0-9_\-]{40,128})(?![A-Za-z0-9_\-])",
        ("api_key_", "api-key-", "apikey_", "apikey-", "access_key_", "access-key-", "secret_key_", "secret-key-",
         "auth_token_", "auth-token-", "apikey-", "api_key-", "api-key_"),
    ),
    Rule("telegram-bot-token", r"\b\d{8,10}:AA[0-9A-Za-z_\-]{33}\b", (":aa",)),
    Rule("groq-key", r"\bgsk_[A-Za-z0-9]{48,}\b", ("gsk_",)),
    Rule("replicate-token", r"\br8_[A-Za-z0-9]{37}\b", ("r8_",)),
    Rule("xai-key", r"\bxai-[A-Za-z0-9]{60,}\b", ("xai-",)),
    Rule("linear-key", r"\blin_api_[A-Za-z0-9]{40}\b", ("lin_api_",)),
    Rule("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", ("dapi",)),
    Rule("postman-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", ("pmak-",)),
    Rule("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}", ("hvs.", "hvb.", "hvr.")),
    # Legacy Vault tokens: ``s.``/``b.``/``r.`` + 24 mixed-case alphanumerics (digits and both cases).
    Rule(
        "vault-token",
        r"(?<![\w.])[sbr]\.(?=[A-Za-z]*[0-9])(?=[a-z0-9]*[A-Z])(?=[A-Z0-9]*[a-z])[A-Za-z0-9]{24}(?![\w.])",
        ("s.", "b.", "r."),
    ),
    Rule("doppler-token", r"\bdp\.(?:pt|st|sa|ct)\.[A-Za-z0-9]{40,}", ("dp.",)),
    Rule("age-secret-key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", ("age-secret-key-",)),
    # --- Headers ----------------------------------------------------------------------
    Rule(
        "bearer-token",
        r"\bBearer\s+(?P<secret>(?=[A-Za-z0-9\-._~+/]*[0-9])[A-Za-z0-9\-._~+/]{8,}=*|[A-Za-z0-9\-._~+/]{20,}=*)",
        ("bearer",),
        "i",
    ),
    Rule(
        "basic-auth",
        r"\bBasic\s+(?P<secret>(?=[A-Za-z0-9+/]*[0-9+/])[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
        ("basic",),
        "i",
    ),
    Rule(
        "auth-header",
        r"\bAuthorization\s*:\s*(?:token|apikey|key|digest)\s+(?P<secret>[^\s'\"]{6,})",
        ("authorization",),
        "i",
    ),
    Rule(
        "api-key-header",
        r"\b(?:x-api-key|x-auth-token|x-access-token|api-key|x-goog-api-key|ocp-apim-subscription-key)\s*:\s*(?P<secret>[^\s'\",]{6,})",
        ("api-key", "-token", "subscription-key"),
        "i",
    ),
    # --- Assignments ------------------------------------------------------------------
    Rule(
        "env-secret",
        r"^[ \t]*(?:export[ \t]+)?[A-Z0-9_]*(?<![A-Z0-9])" + _ENV_SECRET_WORD + r"(?![A-Z0-9])[A-Z0-9_]*[ \t]*=[ \t]*"
        r"(?P<secret>(?!\$\{?[A-Z_])(?![0-9]{1,6}\s*$)" + f"(?:{_QUOTED}|{_BARE}))",
        (
            "password",
            "passwd",
            "passphrase",
            "pwd",
            "secret",
            "token",
            "credential",
            "private",
            "key",
            "auth",
            "dsn",
            "salt",
        ),
    ),
    Rule(
        "password-assignment",
        r"(?:password|passwd|passphrase|pwd|secret|api[_\-]?key|access[_\-]?token|auth[_\-]?token|"
        r"refresh[_\-]?token|client[_\-]?secret|private[_\-]?key)[\w.\-]{0,24}[\"']?[ \t]*(?::=|=>|[:=])(?!=)[ \t]*(?P<secret>"
        + _QUOTED
        + ")",
        ("pass", "pwd", "secret", "key", "token"),
        "i",
    ),
    Rule(
        "password-assignment",
        r"(?<![A-Za-z0-9])(?:password|passwd|passphrase|pwd)[\"']?\s*[:=](?!=)[ \t]*(?P<secret>(?!(?:none|null|nil|true|false|undefined)\b)[^\s\"'`,;()\[\]{}<>.]{3,128})(?![\w(.\[])",
        ("pass", "pwd"),
        "i",
    ),
    Rule("netrc-password", r"\blogin\s+\S+\s+password\s+(?P<secret>\S+)", ("login",)),
    # Any key with a secret word in it (lower, camel or upper case), a value that looks like
    # a credential: quoted, or bare with two digits and a letter (not ``max_tokens = 800``).
    Rule(
        "secret-assignment",
        r"(?i:" + _SECRET_KEY_WORD + r")[A-Za-z0-9_\-]{0,24}[\"'\]]?[ \t]*(?::=|=>|[:=])(?!=)[ \t]*"
        r"(?P<secret>" + _CREDENTIAL_VALUE + ")",
        ("token", "secret", "pass", "pwd", "key", "credential"),
    ),
    # ``os.environ.setdefault("VAULT_TOKEN", "...")``, ``{"API_KEY", "..."}``: a secret-named
    # string followed by a string value.
    Rule(
        "secret-assignment",
        r"(?i:" + _SECRET_KEY_WORD + r")[A-Za-z0-9_\-]{0,24}[\"'][ \t]*,[ \t]*"
        r"(?P<secret>\"(?![$%{<])[^\"\s]{8,256}\"|'(?![$%{<])[^'\s]{8,256}')",
        ("token", "secret", "pass", "pwd", "key", "credential"),
    ),
    # Credentials on command lines: ``--password=x``, ``curl -u user:pw``, ``mysql -p'pw'``,
    # ``redis-cli -a pw``, ``sshpass -p pw``.
    Rule(
        "cli-credential",
        r"(?<![\w-])--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|auth-token|access-token)"
        r"(?:=|[ \t]+)(?P<secret>(?![$-])(?:\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s'\"]{4,256}))",
        ("--pass", "--token", "--api", "--secret", "--client-secret", "--auth-token", "--access-token"),
        "i",
    ),
    Rule(
        "cli-credential",
        r"\bcurl\b[^\n]{0,200}?[ \t](?:-u|--user)[ \t]+[\"']?[^:\s\"']{1,64}:(?P<secret>[^\s\"']{1,256})",
        ("curl",),
    ),
    Rule(
        "cli-credential",
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,200}?[ \t]-p(?P<secret>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s'\"]{1,256})",
        ("mysql", "mariadb"),
    ),
    Rule(
        "cli-credential",
        r"\b(?:redis-cli\b[^\n]{0,200}?[ \t]-a|sshpass\b[^\n]{0,40}?[ \t]-p)[ \t]+(?P<secret>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s'\"]{1,256})",
        ("redis-cli", "sshpass"),
    ),
    Rule(
        "xml-secret",
        r"<(?P<tag>password|passwd|secret|token|api[_\-]?key|apikey|client[_\-]?secret|access[_\-]?token)>"
        r"(?P<secret>[^<\s]{3,256})</(?P=tag)>",
        ("<password>", "<passwd>", "<secret>", "<token>", "<api", "<client", "<access"),
        "i",
    ),
    # A token as a URL's user name (``https://ghp_…@github.com``, a Sentry DSN's key).
    Rule(
        "url-token",
        r"\b[a-z][a-z0-9+.\-]{1,20}://(?P<secret>(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{20,128})(?::[A-Za-z0-9_\-]{8,128})?@",
        ("://",),
        "i",
    ),
    Rule("okta-token", r"\bSSWS\s+(?P<secret>[A-Za-z0-9_\-]{20,})", ("ssws",)),
    # In prose: "the new DB password is Tr0ub4dor-and-3" (a digit or symbol in it).
    Rule(
        "password-in-prose",
        r"\b(?:password|passphrase|passwd|pwd)\s+(?:is|was|will be|should be|to)\s+[\"'`]?"
        r"(?P<secret>(?=[^\s\"'`]*[0-9!@#$%^&*])[^\s\"'`,;]{6,128}?)[\"'`]?(?=[.,;:!?)]*(?:\s|$))",
        ("pass", "pwd"),
        "i",
    ),
    Rule(
        "cli-credential",
        r"\becho\s+[\"']?(?P<secret>[^\s\"'$]{8,256})[\"']?\s*\|\s*(?:sudo\s+)?(?:docker|podman|helm|gh|oras|buildah)\b[^\n|]{0,40}?\b(?:login|auth)",
        ("login", "auth"),
    ),
    Rule("npm-token", r"_auth(?:Token)?[\"']?[ \t]*=[ \t]*[\"']?(?P<secret>(?!\$\{)[^\s\"']{8,512})", ("_auth",)),
)


def rule_names() -> list[str]:
    """Distinct rule names, in order (what ``[REDACTED:<name>]`` can say)."""
    seen: dict[str, None] = {}
    for rule in RULES:
        seen.setdefault(rule.name, None)
    return list(seen)


#: Compiled alternations by the rule indices they join (``re`` is imported only when a
#: text holds a keyword: most prompts and compaction summaries compile nothing).
_COMBINED: dict[tuple[int, ...], re.Pattern[str]] = {}


def _combined(indices: tuple[int, ...]) -> re.Pattern[str]:
    found = _COMBINED.get(indices)
    if found is not None:
        return found
    import re

    parts: list[str] = []
    for i in indices:
        rule = RULES[i]
        body = rule.pattern.replace("(?P<secret>", f"(?P<s{i}>")
        if rule.flags:
            body = f"(?{rule.flags}:{body})"
        parts.append(f"(?P<r{i}>{body})")
    if len(_COMBINED) >= 256:
        _COMBINED.clear()
    _COMBINED[indices] = compiled = re.compile("|".join(parts), re.MULTILINE)
    return compiled


def _token_rules() -> re.Pattern[str]:
    """Provider-token rules alone (no ``secret`` group): names an assignment's value."""
    idx = tuple(i for i, r in enumerate(RULES) if "(?P<secret>" not in r.pattern and r.name != "private-key")
    return _combined(idx)


#: Every (keyword, rule index), in rule order: one flat scan is ~5x faster than a nested any().
_KEYWORDS: tuple[tuple[str, int], ...] = tuple((k, i) for i, rule in enumerate(RULES) for k in rule.keywords)


def _active(lowered: str) -> tuple[int, ...]:
    """Indices of the rules one of whose keywords occurs in ``lowered``, in rule order."""
    return tuple(dict.fromkeys([i for k, i in _KEYWORDS if k in lowered]))


def _replace(match: re.Match[str]) -> str:
    group = match.lastgroup or ""
    i = int(group[1:]) if group.startswith("r") else -1
    if i < 0:  # pragma: no cover - every alternative is a named group
        return "[REDACTED]"
    name = RULES[i].name
    secret_group = f"s{i}"
    start, end = match.span()
    if secret_group in (match.re.groupindex or {}) and match.group(secret_group) is not None:
        s_start, s_end = match.span(secret_group)
        value = match.group(secret_group).strip("\"'`")
        if value.startswith("[REDACTED:"):  # already redacted: keep the first, more specific label
            return match.group(0)
        token = _token_rules().fullmatch(value)
        if token is not None and token.lastgroup:
            name = RULES[int(token.lastgroup[1:])].name
        text = match.string
        return text[start:s_start] + f"[REDACTED:{name}]" + text[s_end:end]
    return f"[REDACTED:{name}]"


def redact_secrets(text: str) -> str:
    """Replace credentials in ``text`` with ``[REDACTED:<rule>]`` markers (own rules only)."""
    if not text:
        return text
    active = _active(text.lower())
    if not active:
        return text
    return _combined(active).sub(_replace, text)
