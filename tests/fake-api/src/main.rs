//! `vyre-fake-api [--port N]`: the scripted fake Messages API as a process, for tests that are
//! not in Rust (the browser tests). Prints its base URL as the first line of stdout, then serves
//! until killed.

use std::io::Write;

fn main() {
    let mut port = 0u16;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => match args.next().and_then(|p| p.parse().ok()) {
                Some(p) => port = p,
                None => fail("--port takes a number"),
            },
            "-h" | "--help" => {
                println!("usage: vyre-fake-api [--port N]");
                return;
            }
            other => fail(&format!("unknown argument {other:?}")),
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&format!("cannot start: {e}")));
    rt.block_on(async {
        let api = vyre_fake_api::FakeApi::start_on(port)
            .await
            .unwrap_or_else(|e| fail(&format!("cannot listen on port {port}: {e}")));
        let mut out = std::io::stdout();
        let _ = writeln!(out, "{}", api.url());
        let _ = out.flush();
        std::future::pending::<()>().await;
    });
}

fn fail(message: &str) -> ! {
    eprintln!("vyre-fake-api: {message}");
    std::process::exit(2);
}
