"""Redaction: every rule removes what it is for, and ordinary code and prose pass untouched.

Fake credentials are assembled from pieces at run time so secret scanners do not flag
this file; none of them is real.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.safety.redact import RULES, redact, redact_private, redact_secrets, rule_names

A = "A1b2C3d4E5f6G7h8I9j0"  # 20 mixed alphanumerics
HEX32 = "0123456789abcdef" * 2
B64_40 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

# (rule name, text containing a secret, the secret that must disappear)
CASES: list[tuple[str, str, str]] = [
    (
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + A + "\n-----END RSA PRIVATE KEY-----",
        "MIIEpAIBAAKCAQEA",
    ),
    ("private-key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI" + A + "\n-----END EC PRIVATE KEY-----", "MHcCAQEEI"),
    (
        "private-key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA" + A + "\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEA",
    ),
    (
        "private-key",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF" + A + "\n-----END PGP PRIVATE KEY BLOCK-----",
        "lQOYBF",
    ),
    ("private-key", "key:\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq" + A + "\n(truncated", "MIIEvQIBADANBgkq"),
    (
        "jwt",
        "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    ("database-url", "DATABASE_URL=postgres://admin:hunter2pw@db.internal:5432/app", "hunter2pw"),
    ("database-url", "mongodb+srv://app:Mongo-Secret-9@cluster0.mongodb.net/test", "Mongo-Secret-9"),
    ("database-url", "redis://default:r3dis-pass@cache:6379/0", "r3dis-pass"),
    ("database-url", "engine = create_engine('mysql+pymysql://root:my5ql-pw@localhost/db')", "my5ql-pw"),
    ("url-password", "git clone https://deploy:gitPassw0rd@git.example.com/repo.git", "gitPassw0rd"),
    ("url-secret-param", "GET https://api.example.com/v1/items?limit=5&api_key=abc123secretvalue", "abc123secretvalue"),
    ("url-secret-param", "jdbc:postgresql://db/app?user=app&password=jdbcPw99", "jdbcPw99"),
    ("slack-webhook", "https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24, "X" * 24),
    ("discord-webhook", "https://discord.com/api/webhooks/123456789012345678/" + A + A, A + A),
    ("anthropic-key", "export KEY=sk-ant-api03-" + A * 4, A * 4),
    ("openai-key", "client = OpenAI(api_key=sk-proj-" + A * 3 + ")", A * 3),
    ("openai-key", "sk-" + A + "T3BlbkFJ" + A, "T3BlbkFJ"),
    ("google-api-key", "maps key AIza" + "SyD" + A + "abcdefghijkl", "SyD" + A),
    ("google-oauth-token", "ya29." + A + A, A + A),
    ("google-client-secret", "GOCSPX-" + A + "abcdefgh", "GOCSPX-" + A),
    ("stripe-key", "stripe.api_key = sk_live_" + A + "xyz", A + "xyz"),
    ("stripe-key", "rk_test_" + A, "rk_test_" + A),
    ("stripe-webhook-secret", "whsec_" + A + A, A + A),
    ("twilio-api-key", "twilio key SK" + HEX32, HEX32),
    ("sendgrid-key", "SG." + A + "ab" + "." + A + A + "abc", A + A + "abc"),
    ("slack-token", "xoxb-123456789012-1234567890123-" + A, A),
    ("slack-app-token", "xapp-1-A0123BCDEF-1234567890-" + HEX32, HEX32),
    ("github-token", "git push https://ghp_" + A + "0123456789abcdef" + "@github.com", "ghp_" + A),
    ("github-token", "github_pat_11ABCDEFG0" + A + "_" + A, A + "_" + A),
    ("gitlab-token", "glpat-" + A + "xy", "glpat-" + A),
    ("npm-token", "//registry.npmjs.org/:_authToken=npm_" + A + "0123456789abcdef", "npm_" + A),
    ("pypi-token", "password = pypi-AgEIcHlwaS5vcmc" + A * 3, A * 3),
    ("huggingface-token", "HF token hf_" + A + "abcdefghijklmn", "hf_" + A),
    ("azure-storage-key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + B64_40 + "abcd==;", B64_40),
    ("azure-sas-signature", "Endpoint=sb://x.servicebus.windows.net/;SharedAccessSignature=sr%3Dabc%26sig%3D" + A, A),
    ("azure-client-secret", "client secret: abc8Q~" + A + "abcdefghijklm", A + "abcdefghijklm"),
    ("aws-access-key-id", "aws configure set aws_access_key_id AKIA" + "IOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-access-key-id", "ASIA" + "Y34FZKBOKMUTVV7A in the log", "ASIAY34FZKBOKMUTVV7A"),
    ("aws-secret-access-key", "aws_secret_access_key = " + B64_40, B64_40),
    ("aws-secret-access-key", '"AWS_SESSION_TOKEN": "' + B64_40 + B64_40 + '"', B64_40),
    ("digitalocean-token", "dop_v1_" + HEX32 * 2, HEX32 * 2),
    ("shopify-token", "shpat_" + HEX32, "shpat_" + HEX32),
    ("mailgun-key", "api: key-" + HEX32, "key-" + HEX32),
    ("mailchimp-key", HEX32 + "-us14", HEX32),
    ("square-token", "sq0atp-" + A + "abcd", A + "abcd"),
    ("telegram-bot-token", "bot 123456789:AA" + A + "abcdefghijklm", A + "abcdefghijklm"),
    ("onepassword-token", "OP_SERVICE_ACCOUNT_TOKEN=ops_eyJzaWduSW5BZGRyZXNzIjoibXkuMXBhc3N3b3JkLmNvbSJ9" + A * 3, A * 3),
    ("onepassword-token", "Read /home/dev/keys/ops_eyJzaWduSW5BZGRyZXNzIjoibXkuMXBh" + A * 3 + ".pem", A * 3),
    ("artifactory-key", "X-JFrog-Art-Api: AKC" + (A * 3)[:70], (A * 3)[:70]),
    ("artifactory-key", "/srv/keys/AKC" + (A * 3)[:70] + ".txt", (A * 3)[:70]),
    ("artifactory-key", "jfrog rt c --url x AP3" + (A * 2)[:50], (A * 2)[:50]),
    ("softlayer-key", "curl https://api.softlayer.com/soap/v3.1/" + "a1b2c3d4" * 8 + "/SoftLayer_Account", "a1b2c3d4" * 8),
    ("twilio-auth-token", "client = Client('AC" + "0a1b2c3d" * 4 + "', '" + "9f8e7d6c" * 4 + "')", "9f8e7d6c" * 4),
    ("path-credential", "Read /home/dev/.bluemix/apikey-" + "Ab3_x9Kq-" * 5 + ".json", "Ab3_x9Kq-" * 5),
    ("groq-key", "gsk_" + A * 3, A * 3),
    ("replicate-token", "r8_" + A + "abcdefghijklmnopq", "r8_" + A),
    ("xai-key", "xai-" + A * 4, A * 4),
    ("linear-key", "lin_api_" + A * 2, A * 2),
    ("databricks-token", "dapi" + HEX32, "dapi" + HEX32),
    ("postman-key", "PMAK-" + "0123456789abcdef01234567" + "-" + HEX32 + "ab", HEX32 + "ab"),
    ("vault-token", "VAULT hvs." + A + "abcdefgh", A + "abcdefgh"),
    ("doppler-token", "dp.pt." + A * 2 + "abc", A * 2),
    (
        "age-secret-key",
        "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "QPZRY9X8GF2TVDW0S3JN54KHCE6M",
        "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    ),
    ("bearer-token", "curl -H 'Authorization: Bearer abc.def-" + A + "'", A),
    ("basic-auth", 'curl -H "Authorization: Basic dXNlcjpwYXNzd29yZA=="', "dXNlcjpwYXNzd29yZA"),
    ("auth-header", "Authorization: token " + A, A),
    ("api-key-header", "x-api-key: " + A, A),
    ("env-secret", "DB_PASSWORD=correct-horse-battery", "correct-horse-battery"),
    ("env-secret", 'export STRIPE_SECRET="' + A + '"', A),
    ("env-secret", "SESSION_SECRET_KEY='" + A + "'", A),
    ("env-secret", "MY_SERVICE_API_KEY=" + A, A),
    ("env-secret", "SENTRY_DSN=" + "https://" + HEX32 + "@o1.ingest.sentry.io/42", HEX32),
    ("password-assignment", 'password = "s3cr3t-Value!"', "s3cr3t-Value!"),
    ("password-assignment", '{"client_secret": "' + A + '"}', A),
    ("password-assignment", "db:\n  password: plainYamlPw", "plainYamlPw"),
    ("password-assignment", "conn = connect(host='db', passwd='mysqlpw123')", "mysqlpw123"),
    ("netrc-password", "machine api.example.com login ada password netrcPw42", "netrcPw42"),
    ("discord-bot-token", "client.run('MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ." + A + "abcdefg')", A + "abcdefg"),
    ("grafana-token", "GRAFANA=glsa_" + A + "abcdefghijkl_" + HEX32[:8], "glsa_" + A),
    ("atlassian-token", "jira token ATATT3xFfGF0" + A * 3, A * 3),
    ("newrelic-key", "key NRAK-" + "ABCDEFGHIJ0123456789ABCDEFG", "ABCDEFGHIJ0123456789"),
    ("pulumi-token", "pul-" + HEX32 + "01234567", "pul-" + HEX32),
    ("secret-assignment", 'datadog_api_token = "' + A + '"', A),
    ("secret-assignment", "  token: " + A + "xyz", A + "xyz"),
    ("secret-assignment", 'os.environ.setdefault("VAULT_TOKEN", "' + A + '")', A),
    ("cli-credential", "curl -u deploy:" + "Maple1955!horse https://ci.example.com", "Maple1955!horse"),
    ("cli-credential", "mysql -u root -p'Copper7329%tundra' -h db", "Copper7329%tundra"),
    ("cli-credential", "redis-cli -a " + "r3dis-Pass ping", "r3dis-Pass"),
    ("cli-credential", "vault login --token=" + A, A),
    ("cli-credential", "echo " + A + " | docker login -u ci --password-stdin ghcr.io", A),
    ("xml-secret", "<password>" + A + "</password>", A),
    ("url-token", "git clone https://ghp" + A + "@github.com/acme/api.git", A),
    ("url-token", "SENTRY = 'https://" + HEX32 + "@o1.ingest.sentry.io/42'", HEX32),
    ("okta-token", "Authorization: SSWS 00" + A + "abc", A),
    ("password-in-prose", "the new DB password is Tr0ub4dor-and-3, put it in SSM", "Tr0ub4dor-and-3"),
]


@pytest.mark.parametrize(("name", "text", "secret"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_removes_its_secret(name: str, text: str, secret: str) -> None:
    out = redact_secrets(text)
    assert secret not in out
    assert "[REDACTED:" in out


def test_redaction_is_idempotent() -> None:
    for _, text, _ in CASES:
        once = redact(text)
        assert redact(once) == once


def test_every_rule_has_a_case() -> None:
    covered = {name for name, _, _ in CASES}
    assert set(rule_names()) <= covered, set(rule_names()) - covered
    assert len(rule_names()) >= 50


def test_provider_token_assigned_to_a_secret_name_is_labelled_by_provider() -> None:
    out = redact("export GITHUB_TOKEN=ghp_" + A + "0123456789abcdef")
    assert out == "export GITHUB_TOKEN=[REDACTED:github-token]"


def test_assignment_keeps_the_key_and_replaces_only_the_value() -> None:
    assert redact("DB_PASSWORD=correct-horse-battery") == "DB_PASSWORD=[REDACTED:env-secret]"
    assert redact("postgres://admin:pw123456@db/app") == "postgres://admin:[REDACTED:database-url]@db/app"
    assert redact("Authorization: Bearer " + A) == "Authorization: Bearer [REDACTED:bearer-token]"


def test_unclosed_private_key_is_removed_up_to_the_first_non_key_line() -> None:
    text = (
        "key:\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq" + A + "\n" + A + "==\n(output truncated) then more prose"
    )
    out = redact(text)
    assert A not in out
    assert out.startswith("key:\n[REDACTED:private-key]")
    assert out.endswith("(output truncated) then more prose")


def test_private_spans_are_removed_including_unclosed_ones() -> None:
    assert redact_private("keep <private>my diary</private> this") == "keep [REDACTED:private] this"
    assert (
        redact_private("a <PRIVATE>x\ny</Private> b <private>c</private>")
        == "a [REDACTED:private] b [REDACTED:private]"
    )
    assert redact_private("start <private>never closed\nmore") == "start [REDACTED:private]"
    assert "diary" not in redact("<private>diary</private>")


ORDINARY = [
    "def get_password(user):\n    return vault.lookup(user)\n",
    "password = get_password(user)\nif password == expected:\n    login()",
    "token = tokenizer.encode(text)\nMAX_TOKENS=800\nROLLING_GRAPH_BUDGET_TOKENS=800",
    "API_KEY=${API_KEY}\nSECRET_KEY=$SECRET_KEY",
    "Basic authentication is configured in settings.py; see the Bearer section.",
    "The skeleton uses sk-learn style pipelines and a task-runner.",
    "https://github.com/anthropics/claude-code/issues/1234 and http://localhost:8080/api",
    "postgres://localhost/app and postgresql:///var/run/db",
    "for key, value in mapping.items():\n    secret_count += 1\n",
    "SELECT id, password_hash FROM users WHERE email = %s",
    "commit 3f9c2b1e0d4a5f6e7b8c9d0e1f2a3b4c5d6e7f80 fixed the build",
    "uuid 123e4567-e89b-12d3-a456-426614174000 and sha256 " + "ab" * 32,
    "The user decided: let's go with PostgreSQL instead of SQLite for the warm store.",
    "x = {'password': None, 'token': user_token}\nauth = request.headers.get('Authorization')",
    "TOKEN_LIMIT=5\nPASSWORD_MIN_LENGTH=12",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ public key user@host",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_code_and_prose_are_not_mangled(text: str) -> None:
    assert redact(text) == text


def test_rules_compile_and_are_named() -> None:
    assert all(rule.name and rule.keywords for rule in RULES)
    assert redact("") == "" and redact("plain") == "plain"


def _mixed_corpus(size: int) -> str:
    para = (
        "def handler(event):\n    path = event['paths'][0]\n    return render(path)\n"
        "The user asked to refactor the gate; tests in tests/test_gate.py pass.\n"
        "$ pytest -q\n........ 8 passed in 0.12s\n"
        "DB_PASSWORD=correct-horse-battery\nAuthorization: Bearer " + A + "\n"
        "url = 'https://api.example.com/v1?limit=10'\n"
    )
    return (para * (size // len(para) + 1))[:size]


def test_redacting_100_kb_is_fast() -> None:
    text = _mixed_corpus(100_000)
    redact(text)  # warm the compiled-pattern cache
    start = time.process_time()  # CPU time: the machine may be shared
    out = redact(text)
    elapsed = time.process_time() - start
    assert "correct-horse-battery" not in out and A not in out
    assert elapsed < 1.0, f"redacting 100 KB took {elapsed * 1000:.0f} ms"


def test_pathological_input_does_not_backtrack_for_long() -> None:
    text = (
        ("password=" + "a" * 600 + " ") * 50
        + "-----BEGIN PRIVATE KEY-----"
        + "x" * 20_000
        + ("eyJ" + "a" * 500 + ".") * 40
    )
    start = time.perf_counter()
    redact(text)
    assert time.perf_counter() - start < 1.0


_ALL_KEYWORDS = sorted({k for rule in RULES for k in rule.keywords})


@given(st.lists(st.sampled_from([*_ALL_KEYWORDS, " ", "x", "label", "-"]), max_size=8))
def test_the_flat_keyword_scan_selects_exactly_the_rules_whose_keywords_occur(parts: list[str]) -> None:
    from rolling_graph.safety.rules import _active

    text = "".join(parts).lower()
    expected = tuple(i for i, rule in enumerate(RULES) if any(k in text for k in rule.keywords))
    assert _active(text) == expected
