use clap::Parser;
use safe_outcomes::cli::{
    exit_code, init_logging, is_broken_pipe, load_dotenv, no_transparent_huge_pages,
    purge_freed_pages_at_once, quiet_on_closed_pipe, run, Cli, Command,
};
use safe_outcomes::settings;

/// mimalloc, not glibc's malloc (`cli::allocator`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    purge_freed_pages_at_once();
    no_transparent_huge_pages();
    // A closed stdout ends any command quietly (`cli::exit`).
    quiet_on_closed_pipe();
    // `serve` reads `.env` before its settings are parsed (the environment wins).
    if std::env::args().nth(1).as_deref() == Some("serve") {
        if let Err(e) = load_dotenv(std::path::Path::new(".env")) {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    }
    let cli = Cli::parse();
    // The demo prints its own report; keep its logs to warnings.
    let level = match cli.command {
        Command::Demo(_) if !settings::is_set(&settings::LOG_LEVEL) => "warn".to_string(),
        _ => cli.log_level.clone(),
    };
    if let Err(e) = init_logging(&level, cli.log_format) {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
    if let Err(e) = run(cli).await {
        if is_broken_pipe(&e) {
            // `safe-outcomes report | head`: the reader had enough.
            return;
        }
        eprintln!("error: {e:#}");
        std::process::exit(exit_code(&e));
    }
}
