fn main() {
    std::process::exit(vyre::cli::main());
}
