// No console window on Windows release builds; the Mac and Linux ignore it.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    std::process::exit(vyre_app::run());
}
