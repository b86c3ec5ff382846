//! docs/library.md shows a Cargo snippet and a program; this crate is them. Building it proves
//! the snippet is enough for the program, and these checks keep the page and the crate one.

const PAGE: &str = include_str!("../../library.md");
const MANIFEST: &str = include_str!("../Cargo.toml");
const PROGRAM: &str = include_str!("../src/main.rs");

/// The text of each fenced block of `lang` on the page.
fn blocks(lang: &str) -> Vec<&'static str> {
    let fence = format!("```{lang}\n");
    PAGE.split(fence.as_str()).skip(1).filter_map(|rest| rest.split("```").next()).collect()
}

#[test]
fn the_snippet_is_the_manifests_dependencies() {
    let snippet = blocks("toml");
    let snippet = snippet.first().expect("the page has a toml block");
    let dependencies = MANIFEST.split("[dependencies]\n").nth(1).expect("the manifest has dependencies");
    assert_eq!(snippet.trim(), format!("[dependencies]\n{}", dependencies.trim()));
}

#[test]
fn the_program_is_the_pages_first_example() {
    let example = blocks("rust");
    assert_eq!(*example.first().expect("the page has a rust block"), PROGRAM);
}
