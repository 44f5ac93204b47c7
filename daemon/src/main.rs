fn main() {
    std::process::exit(vyre::surfaces::cli::main());
}
