//! The table: one row per environment variable the App, its commands, its
//! tests and benchmarks read. A new setting is a new row here; a clap
//! argument names its row (`env = settings::NAME.name`), and the docs are
//! rendered from the rows (`super::readme_markdown`).

use super::{Scope, Setting};

/// Declares each row as a constant named like its variable, and `ALL`, in
/// the order the docs list them.
macro_rules! settings {
    ($($id:ident: $scope:expr, flag $flag:literal, default $default:literal, $meaning:literal;)*) => {
        $(
            #[doc = $meaning]
            pub const $id: Setting = Setting {
                name: stringify!($id),
                scope: $scope,
                flag: $flag,
                default: $default,
                meaning: $meaning,
            };
        )*
        /// Every setting, in the docs' order.
        pub const ALL: &[&Setting] = &[$(&$id),*];
    };
}

use Scope::{Commands, Serve, Shared, Test};

/// `outputs --web` and `report --web`.
const WEB: Scope = Commands("`outputs --web`, `report --web`");

settings! {
    APP_ID: Serve, flag true, default "—",
        "GitHub App id. Unset: listen-only mode (no API calls, no check runs).";
    PRIVATE_KEY: Serve, flag true, default "—",
        "the App's private key (PEM), inline (a PEM, one with `\\n` escapes, or base64 of one; wins over `PRIVATE_KEY_PATH`)";
    PRIVATE_KEY_PATH: Serve, flag true, default "—",
        "the App's private key (PEM), as a file";
    WEBHOOK_SECRET: Shared, flag true, default "—",
        "webhook secret; a comma-separated list during a rotation. Unset: deliveries are refused.";
    API_TOKEN: Shared, flag true, default "—",
        "bearer token for the read API and manifest posts, and the operator's sign-in to the dashboard. Unset: those refuse everyone but OIDC manifest posts and GitHub sign-ins.";
    PORT: Serve, flag true, default "`3000`",
        "the port to listen on (`0`: any free one)";
    HOST: Serve, flag true, default "`127.0.0.1`",
        "the address to listen on";
    PUBLIC_URL: Serve, flag true, default "`http://HOST:PORT`",
        "the address users reach the server at (links in check runs, App registration)";
    WEBHOOK_PATH: Shared, flag true, default "`/api/github/webhooks`",
        "the webhook route";
    DATA_DIR: Shared, flag true, default "`./data`",
        "the sled store's folder";
    DATABASE_URL: Shared, flag true, default "—",
        "`postgres://…`: keep the state in PostgreSQL instead ([deploy](#deploy))";
    GITHUB_API_URL: Serve, flag true, default "`https://api.github.com`",
        "GitHub Enterprise Server's API (`https://HOST/api/v3`)";
    GITHUB_WEB_URL: Serve, flag true, default "derived from `GITHUB_API_URL`",
        "GitHub's web address, for sign-in and registration";
    GITHUB_CLIENT_ID: Serve, flag true, default "—",
        "the App's OAuth client id, for \"Sign in with GitHub\" (the setup page writes it; [docs/auth.md](docs/auth.md))";
    GITHUB_CLIENT_SECRET: Serve, flag true, default "—",
        "the App's OAuth client secret (the setup page writes it)";
    SESSION_SECRET: Serve, flag true, default "a random key kept in the store",
        "key that signs session cookies and CSRF tokens (replicas share the stored one)";
    ENV_FILE: Serve, flag true, default "`.env`",
        "where the setup page writes a registered App's credentials (mode 0600, never overwritten silently)";
    OIDC_AUDIENCE: Serve, flag true, default "—",
        "accept GitHub Actions OIDC tokens with this audience on manifest posts (unset: refused)";
    OIDC_ISSUER: Serve, flag true, default "`https://token.actions.githubusercontent.com`",
        "the OIDC issuer (`https://HOST/_services/token` on GHES)";
    OIDC_ALLOWED_OWNERS: Serve, flag true, default "—",
        "comma-separated logins or account ids whose OIDC tokens are accepted besides the accounts the App is installed on";
    CHECK_RUNS_ON_CLOSED_PRS: Serve, flag true, default "`false`",
        "also give a check run to PRs that were already closed when the App learned of them (backfilled or reconciled)";
    REDELIVERY_INTERVAL_SECS: Serve, flag true, default "`600`",
        "seconds between looks for failed deliveries to have redelivered (App mode; 0: at start-up only)";
    BACKFILL_DAYS: Serve, flag true, default "`30`",
        "days of gh-aw runs backfilled for a new installation or repository";
    BACKFILL_RESERVE: Serve, flag true, default "`500`",
        "API requests kept in reserve: the backfill pauses at this many left until the rate limit resets";
    BACKFILL_POLL_SECS: Serve, flag true, default "`60`",
        "longest wait, while the backfill is paused, between looks at the rate limit";
    DURABILITY: Serve, flag true, default "`process-crash`",
        "what a 2xx promises on sled: `process-crash`, or `power-loss` (an `fdatasync` per group commit) ([durability](#durability)); the other commands read it from the environment (anything else: `process-crash`)";
    DEDUP_WINDOW_HOURS: Serve, flag true, default "`192` (8 days)",
        "how long a delivery id is remembered, so a redelivery is a duplicate (≥ 1)";
    MANIFEST_MAX_LINES: Serve, flag true, default "`100000`",
        "items a manifest may have (more: 413, nothing stored)";
    MANIFEST_MAX_LINE_BYTES: Serve, flag true, default "`65536`",
        "bytes a manifest line may have (longer: that line is rejected)";
    MAX_CONNECTIONS: Serve, flag true, default "`4096`",
        "open connections served at once; more wait until one closes";
    HEADER_TIMEOUT_SECS: Serve, flag true, default "`10`",
        "a connection slower than this to send its headers, or idle this long, is closed";
    BODY_TIMEOUT_SECS: Serve, flag true, default "`60`",
        "a body still arriving after this is cut: 408, nothing stored";
    BODY_BUDGET_BYTES: Serve, flag true, default "`67108864` (64 MiB)",
        "body bytes all requests may hold in memory together (over: 503 with `Retry-After`)";
    READ_CONCURRENCY: Serve, flag false, default "cores − 1 (1 to 4)",
        "dashboard pages and read-API calls served at once; webhooks never wait for them";
    READ_WAIT_MS: Serve, flag false, default "`2000`",
        "how long a read waits for a place before a 503";
    READ_SCHED: Serve, flag false, default "`idle`",
        "`idle`: the read threads yield a core at once to webhook acks (Linux `SCHED_IDLE`); `normal`: ordinary scheduling at `READ_NICE` ([docs/store.md](docs/store.md#the-read-budget))";
    READ_NICE: Serve, flag false, default "`10`",
        "the nice value (0–19) of the read threads";
    WORKER_NICE: Serve, flag false, default "`10`",
        "the nice value (0–19) of the worker";
    METRICS_TOKEN: Serve, flag true, default "the `API_TOKEN`",
        "the bearer `/metrics` requires ([deploy/README.md](deploy/README.md))";
    METRICS_ADDR: Serve, flag true, default "—",
        "serve `/metrics` on this `host:port` of its own instead";
    METRICS_WORKFLOW_LABELS: Serve, flag true, default "`false`",
        "label the outputs gauge by workflow";
    OTEL_EXPORTER_OTLP_ENDPOINT: Serve, flag true, default "—",
        "an OTLP/HTTP collector (`http://collector:4318`) for a span per change of outcome ([docs/export.md](docs/export.md#outcome-spans-over-otlp))";
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Serve, flag false, default "—",
        "the full traces URL instead of `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces` (wins over it)";
    OTEL_EXPORTER_OTLP_HEADERS: Serve, flag false, default "—",
        "headers for the OTLP exporter (`key=value,…`; read by the exporter itself)";
    LOG_LEVEL: Shared, flag true, default "`info`",
        "a level (`trace`…`error`, `off`) or `target=level` directives (all commands; `demo` without it: `warn`)";
    LOG_FORMAT: Shared, flag true, default "`pretty`",
        "`pretty` or `json` (all commands)";
    MIMALLOC_PURGE_DELAY: Serve, flag false, default "`0` (set by the binary)",
        "the allocator's purge delay; set it to override the binary's choice ([docs/store.md](docs/store.md#memory-the-allocator-and-sleds-cache))";
    MIMALLOC_ALLOW_THP: Serve, flag false, default "`0` (set by the binary)",
        "the allocator's use of transparent huge pages; set it to override the binary's choice";

    SAFE_OUTCOMES_URL: Commands("`report`, `outputs`, `record`, `replay`, `backfill`"), flag true,
        default "`http://127.0.0.1:3000`",
        "the server to talk to (`--server`)";
    SAFE_OUTCOMES_AUDIENCE: Commands("`record`"), flag true, default "—",
        "with no token, inside GitHub Actions: ask for an OIDC token for this audience (`--audience`)";
    GITHUB_REPOSITORY: Commands("`record`"), flag true, default "—",
        "the run's repository (`-R`), as GitHub Actions sets it";
    GITHUB_RUN_ID: Commands("`record`"), flag true, default "—",
        "the run's id (`--run-id`), as GitHub Actions sets it";
    ACTIONS_ID_TOKEN_REQUEST_URL: Commands("`record`"), flag false, default "—",
        "where GitHub Actions hands out OIDC tokens (set by the runner with `id-token: write`)";
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: Commands("`record`"), flag false, default "—",
        "the runner's token for asking for one";
    SAFE_OUTCOMES_FORCE_TTY: Commands("`outputs`"), flag false, default "—",
        "print as to a terminal even into a pipe (like `gh`'s `GH_FORCE_TTY`)";
    BROWSER: WEB, flag false, default "—",
        "the browser to open (`%s` stands for the address); without it `xdg-open` or `open` from `PATH`; piped or with none, the address is printed";
    PATH: WEB, flag false, default "the system's",
        "where `xdg-open` or `open` is looked for";

    CI: Test, flag false, default "—",
        "set: a test whose tool or data is missing fails instead of skipping";
    SAFE_OUTCOMES_TEST_PG: Test, flag false, default "—",
        "an admin URL of a PostgreSQL server: every store the tests (and `bench`, through `--database-url`) open is a database of its own there";
    GITHUB_DESCRIPTIONS: Test, flag false, default "`target/github-descriptions`",
        "the folder `scripts/github-descriptions` filled (default `target/github-descriptions`)";
    OPENTRACES_PYTHON: Test, flag false, default "`target/opentraces-venv/bin/python`",
        "a Python with `opentraces-schema` installed (default `target/opentraces-venv/bin/python`)";
    SAFE_OUTCOMES_LONG: Test, flag false, default "—",
        "set: the long variants of the crash and backpressure tests";
    SAFE_OUTCOMES_WRITE_SPEC: Test, flag false, default "—",
        "set: `cargo test --lib judge::spec` rewrites `docs/evaluation.md` from the code";
    SAFE_OUTCOMES_BLESS_README: Test, flag false, default "—",
        "set: `cargo test --test it readme` rewrites the README's demo block with the demo's current output (`tests/it/readme.rs`), and `cargo test --test it settings` the configuration section and the table here from `src/settings/table.rs`";
    SAFE_OUTCOMES_PAGE_IN: Test, flag false, default "—",
        "`0`: the store does not page a batch's leaves in before sled's lock (for `bench ingest`'s before and after on one build; [store.md](store.md))";
    SAFE_OUTCOMES_WRITE_OPENAPI_EXAMPLES: Test, flag false, default "—",
        "set: `cargo test --test it schema` writes the answers it sees as the OpenAPI examples (`src/http/openapi-examples.json`)";
    SAFE_OUTCOMES_DIFFERENTIAL_SEED: Test, flag false, default "`0`",
        "the differential test's seed: a number, or `random`";
    SAFE_OUTCOMES_DIFFERENTIAL_CASES: Test, flag false, default "the test's own",
        "how many cases the differential test runs";
    SAFE_OUTCOMES_RENAME_CASES: Test, flag false, default "the test's own",
        "how many cases the renamed-repository property runs (`tests/it/differential/renames.rs`)";
    SAFE_OUTCOMES_DIFFERENTIAL_BYTES: Test, flag false, default "—",
        "replay one differential case from its bytes";
    SAFE_OUTCOMES_DIFFERENTIAL_STRICT: Test, flag false, default "—",
        "set: the differential test's known gaps fail too";
    SAFE_OUTCOMES_DIFFERENTIAL_TYPES: Test, flag false, default "—",
        "comma-separated output types: the differential test compares those only";
    DIFF_TRACE: Test, flag false, default "—",
        "set: the differential test prints each step";
    CHROMIUM: Test, flag false, default "found in `/usr/bin`",
        "the Chromium the browser tests drive";
    CHROMEDRIVER: Test, flag false, default "found in `/usr/bin`",
        "the chromedriver the browser tests drive";
}
