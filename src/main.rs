use clap::Parser;
use safe_outcomes::cli::{init_logging, run, Cli, Command};

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    // The demo prints its own report; keep its logs to warnings.
    let level = match cli.command {
        Command::Demo(_) if std::env::var_os("LOG_LEVEL").is_none() => "warn".to_string(),
        _ => cli.log_level.clone(),
    };
    init_logging(&level, cli.log_format);
    if let Err(e) = run(cli).await {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
