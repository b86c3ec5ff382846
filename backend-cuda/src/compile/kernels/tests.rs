//! The table against the kernel sources: every `extern "C" __global__` signature of each
//! program (the per-curve kernels expanded from their macros) is parsed and compared with the
//! table, so a kernel whose parameters change without the table fails here, on any machine.

use std::collections::{BTreeMap, HashSet};

use super::*;
use crate::compile::programs;

/// `text` with `word` replaced by `by` wherever it stands as a whole identifier.
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        let whole = !before.is_some_and(is_ident) && !after.is_some_and(is_ident);
        out.push_str(&rest[..at]);
        out.push_str(if whole { by } else { word });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// The text inside the parentheses that open at `text[0]`, and what follows them.
fn parenthesised(text: &str) -> (&str, &str) {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return (&text[1..i], &text[i + 1..]);
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced parentheses in {text:.80}")
}

/// The source with comments removed, continuation lines joined, and every invocation of a
/// macro that defines kernels replaced by its expansion.
fn expanded(source: &str) -> String {
    let joined = source.replace("\\\n", " ");
    let code: Vec<&str> = joined.lines().map(|l| l.split("//").next().unwrap_or("")).collect();
    let mut macros: Vec<(String, Vec<String>, String)> = Vec::new();
    let mut out = String::new();
    for line in code {
        let trimmed = line.trim();
        if let Some(def) = trimmed.strip_prefix("#define ") {
            if def.contains("__global__") {
                let open = def.find('(').expect("a kernel macro takes parameters");
                let (params, body) = parenthesised(&def[open..]);
                let params = params.split(',').map(|p| p.trim().to_string()).collect();
                macros.push((def[..open].to_string(), params, body.to_string()));
            }
            continue;
        }
        let invoked = macros.iter().find(|(name, _, _)| {
            trimmed.strip_prefix(name.as_str()).is_some_and(|rest| rest.trim_start().starts_with('('))
        });
        match invoked {
            Some((name, params, body)) => {
                let rest = trimmed[name.len()..].trim_start();
                let (args, _) = parenthesised(rest);
                let mut text = body.clone();
                for (p, a) in params.iter().zip(args.split(',')) {
                    text = replace_word(&text, p, a.trim());
                }
                out.push_str(&text.replace(" ## ", "").replace("##", ""));
                out.push('\n');
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

fn elem(c_type: &str) -> Elem {
    match c_type {
        "u32" => Elem::U32,
        "u64" => Elem::U64,
        "Fr" => Elem::Fr,
        "Fq" => Elem::Fq,
        "Fq2" => Elem::Fq2,
        "Affine<Fq>" => Elem::G1Affine,
        "Affine<Fq2>" => Elem::G2Affine,
        "Xyzz<Fq>" => Elem::G1Xyzz,
        "Xyzz<Fq2>" => Elem::G2Xyzz,
        "Jacobian<Fq>" => Elem::G1Jacobian,
        "Jacobian<Fq2>" => Elem::G2Jacobian,
        "BigBucket" => Elem::BigBucket,
        other => panic!("a kernel parameter of unknown type {other}"),
    }
}

/// One parameter's declaration (`const Fr* __restrict__ a`, `u32 n`) as the table writes it.
fn param(decl: &str) -> Param {
    let words: Vec<&str> = decl.split_whitespace().filter(|w| *w != "__restrict__").collect();
    let (name, ty) = words.split_last().expect("a parameter has a name");
    let ty = ty.join(" ");
    let (constant, ty) = match ty.strip_prefix("const ") {
        Some(t) => (true, t.to_string()),
        None => (false, ty),
    };
    let name: &'static str = String::leak(name.to_string());
    match ty.strip_suffix('*') {
        Some(pointee) => {
            let access = if constant { Access::Read } else { Access::ReadWrite };
            Param { name, kind: ParamKind::Ptr(elem(pointee.trim()), access) }
        }
        None if ty == "u32" => Param { name, kind: ParamKind::U32 },
        None => panic!("a value parameter of type {ty}"),
    }
}

/// Every kernel `source` defines: its name and parameters.
fn signatures(source: &str) -> BTreeMap<String, Vec<Param>> {
    let text = expanded(source);
    let mut found = BTreeMap::new();
    let marker = "extern \"C\" __global__ void";
    let mut rest = text.as_str();
    while let Some(at) = rest.find(marker) {
        let mut after = rest[at + marker.len()..].trim_start();
        if let Some(bounds) = after.strip_prefix("__launch_bounds__") {
            after = parenthesised(bounds.trim_start()).1.trim_start();
        }
        let open = after.find('(').expect("a kernel has parameters");
        let name = after[..open].trim().to_string();
        let (params, tail) = parenthesised(&after[open..]);
        let params = params.split(',').map(param).collect();
        assert!(found.insert(name.clone(), params).is_none(), "kernel {name} defined twice");
        rest = tail;
    }
    found
}

#[test]
fn the_table_matches_every_kernel_signature_in_the_sources() {
    let mut in_programs = HashSet::new();
    for program in programs() {
        let defined = signatures(&program.source);
        let listed: HashSet<&str> = program.kernels.iter().map(|k| k.name()).collect();
        let defined_names: HashSet<&str> = defined.keys().map(String::as_str).collect();
        assert_eq!(listed, defined_names, "{}: the kernels it loads are the ones its source defines", program.name);
        for &kernel in &program.kernels {
            assert!(in_programs.insert(kernel), "{} is loaded by two programs", kernel.name());
            assert_eq!(kernel.params(), defined[kernel.name()], "{}: the table against the source", kernel.name());
        }
    }
    let table: HashSet<Kernel> = Kernel::ALL.into_iter().collect();
    assert_eq!(table.len(), Kernel::ALL.len(), "a kernel listed twice");
    assert_eq!(table, in_programs, "every kernel of the table is loaded by one program, and only those");
}

#[test]
fn the_parser_expands_per_curve_macros() {
    let source = "#define K(P, F) \\\n  extern \"C\" __global__ void P##_k(const Affine<F>* a, u32 n) { }\nK(g1, Fq)\nK(g2, Fq2)\n";
    let found = signatures(source);
    assert_eq!(found["g1_k"], vec![read("a", Elem::G1Affine), u32("n")]);
    assert_eq!(found["g2_k"], vec![read("a", Elem::G2Affine), u32("n")]);
}

#[test]
fn launches_with_the_wrong_arguments_are_refused() {
    let k = Kernel::ScanAdd;
    assert!(k.check(&[Arg::Ptr(0), Arg::U32(1), Arg::Ptr(0)]).is_ok());
    assert!(matches!(k.check(&[Arg::Ptr(0), Arg::U32(1)]), Err(ArgumentMismatch::Count { given: 2, expected: 3 })));
    assert!(matches!(
        k.check(&[Arg::Ptr(0), Arg::Ptr(1), Arg::Ptr(0)]),
        Err(ArgumentMismatch::Kind { index: 1, param: "n", expected: "a u32" })
    ));
}
