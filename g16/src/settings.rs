//! Settings from the environment, read once when a command starts and passed down as typed
//! options: nothing below this module reads a `G16_*` variable. docs/tuning.md lists every
//! name, its values and its default; a value that cannot be used is an error naming it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::key_store::KeyStore;
use crate::trust::CheckedFiles;
use g16_backend::msm_plan::{MsmTuning, TABLE_WIDTHS, WINDOW_WIDTHS};

/// A variable whose value cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{name}={value:?}: expected {expected}")]
pub struct SettingsError {
    pub name: &'static str,
    pub value: String,
    pub expected: &'static str,
}

/// Everything g16 takes from its environment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// Keys, compiled kernels and pipeline caches: `$G16_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/g16`, else `~/.cache/g16`; `None` where none of them is set.
    pub cache_dir: Option<PathBuf>,
    /// The CUDA backend's options (the ordinal is set when a device opens).
    #[cfg(feature = "cuda")]
    pub cuda: g16_cuda::CudaOptions,
    /// The wgpu backend's options (the ordinal is set when a device opens).
    #[cfg(feature = "wgpu")]
    pub wgpu: g16_wgpu::WgpuOptions,
    /// The tuning variables given (name and value as written; `G16_CACHE_DIR` left out), so a
    /// measurement can say what it ran under (`g16 bench`'s JSON lines).
    pub given: BTreeMap<String, String>,
}

/// Every `G16_*` name g16 reads: the settings above, and the tests' own.
pub const KNOWN: &[&str] = &[
    "G16_CACHE_DIR",
    "G16_CUDA_ONES_SPLIT",
    "G16_CUDA_MSM_WINDOW",
    "G16_CUDA_MSM_TABLE_WINDOW",
    "G16_CUDA_MSM_PRECOMPUTE",
    "G16_CUDA_MSM_PRECOMPUTE_MAX",
    "G16_CUDA_MSM_PRECOMPUTE_MAX_G2",
    "G16_CUDA_MSM_TABLE_SHIFTS",
    "G16_CUDA_MSM_TABLE_BUILD",
    "G16_CUDA_NTT_TWIDDLES",
    "G16_CUDA_NTT_BLOCK",
    "G16_CUDA_MSM_ACCUMULATION",
    "G16_CUDA_MSM_SCATTER",
    "G16_CUDA_MADD_FUSED_Y",
    "G16_WGPU_ARITH",
    "G16_WGPU_SUBGROUP",
    "G16_NO_PIPELINE_CACHE",
    "G16_WGPU_MSM_WINDOW",
    "G16_WGPU_MSM_TABLE_WINDOW",
    "G16_WGPU_MSM_PRECOMPUTE",
    "G16_WGPU_MSM_PRECOMPUTE_MAX",
    "G16_REQUIRE_CPU",
    "G16_REQUIRE_CUDA",
    "G16_REQUIRE_WGPU",
    "G16_REQUIRE_NVRTC",
    "G16_REQUIRE_CXX",
    "G16_REQUIRE_CIRCOM",
    "G16_REQUIRE_POSTGRES",
    "G16_POSTGRES_BINDIR",
    "G16_CONFORMANCE",
    "G16_TEST_SEED",
    // Set by cargo for `cargo run`/`cargo test` (build.rs stamps the binary with it); not read.
    "G16_COMMIT",
];

/// The `G16_*` variables of the environment that g16 does not read (a misspelling, or a switch
/// that no longer exists), so the CLI can say they are ignored.
pub fn unknown_variables() -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| name.starts_with("G16_") && !KNOWN.contains(&name.as_str()))
        .collect()
}

/// Reads and checks variables of one environment, noting the `G16_*` ones that had a value.
struct Vars<F: Fn(&str) -> Option<String>>(F, RefCell<BTreeMap<String, String>>);

// reason: a CPU-only build reads no backend's variables
#[cfg_attr(not(any(feature = "cuda", feature = "wgpu")), allow(dead_code))]
impl<F: Fn(&str) -> Option<String>> Vars<F> {
    /// The variable's value; an empty one counts as unset.
    fn get(&self, name: &str) -> Option<String> {
        let value = (self.0)(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        if let Some(v) = &value {
            if name.starts_with("G16_") && name != "G16_CACHE_DIR" {
                self.1.borrow_mut().insert(name.to_string(), v.clone());
            }
        }
        value
    }

    fn parse<T>(
        &self,
        name: &'static str,
        expected: &'static str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, SettingsError> {
        match self.get(name) {
            None => Ok(None),
            Some(value) => parse(&value).map(Some).ok_or(SettingsError { name, value, expected }),
        }
    }

    fn flag(&self, name: &'static str) -> Result<Option<bool>, SettingsError> {
        self.parse(name, "1 or 0", |v| match v.to_ascii_lowercase().as_str() {
            "1" | "true" | "on" | "yes" => Some(true),
            "0" | "false" | "off" | "no" => Some(false),
            _ => None,
        })
    }

    fn width(
        &self,
        name: &'static str,
        widths: std::ops::RangeInclusive<u32>,
        expected: &'static str,
    ) -> Result<Option<u32>, SettingsError> {
        self.parse(name, expected, |v| v.parse().ok().filter(|c| widths.contains(c)))
    }

    fn log2(&self, name: &'static str) -> Result<Option<u32>, SettingsError> {
        self.parse(name, "a log2 size, 0 to 40", |v| v.parse().ok().filter(|&l: &u32| l <= 40))
    }

    /// A backend's MSM tuning from `<prefix>_MSM_WINDOW`, `_TABLE_WINDOW`, `_PRECOMPUTE` (0:
    /// no shifted bases) and `_PRECOMPUTE_MAX`, with the backend's `default_tables` range.
    fn msm(&self, names: [&'static str; 4], default_tables: (u32, u32)) -> Result<MsmTuning, SettingsError> {
        let [window, table_window, min, max] = names;
        let max = self.log2(max)?.unwrap_or(default_tables.1);
        let tables = match self.log2(min)? {
            Some(0) => None,
            Some(min) => Some((min, max)),
            None => Some((default_tables.0, max)),
        };
        Ok(MsmTuning {
            window: self.width(window, WINDOW_WIDTHS, "a window width, 4 to 20")?,
            table_window: self.width(table_window, TABLE_WIDTHS, "a window width, 8 to 20")?,
            tables,
        })
    }
}

impl Settings {
    /// These settings for a process that makes one proof (`g16 prove --zkey`, `--compiled`):
    /// the MSMs' shifted bases, where left at their defaults, are not made, since they cost
    /// more than one proof's MSMs save (CUDA builds G1's at 2^20 in ~180 ms of device time
    /// beside the proof, to save a few ms an MSM; wgpu builds them before the upload returns,
    /// seconds at 2^20). A setting given explicitly is kept.
    pub fn for_one_proof(&self) -> Settings {
        #[allow(unused_mut)] // reason: without the GPU features there is nothing to change
        let mut one = self.clone();
        #[cfg(feature = "cuda")]
        if one.cuda.table_build == g16_cuda::TableBuild::default() {
            one.cuda.table_build = g16_cuda::TableBuild::Off;
        }
        #[cfg(feature = "wgpu")]
        if one.wgpu.msm.tables == MsmTuning::default().tables {
            one.wgpu.msm.tables = None;
        }
        one
    }

    /// The settings the process environment gives.
    pub fn from_env() -> Result<Settings, SettingsError> {
        Settings::from_vars(|name| std::env::var(name).ok())
    }

    /// The settings `var` gives (the environment, or a test's table).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Settings, SettingsError> {
        let vars = Vars(var, RefCell::default());
        let cache_dir = vars
            .get("G16_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| vars.get("XDG_CACHE_HOME").map(|x| PathBuf::from(x).join("g16")))
            .or_else(|| vars.get("HOME").map(|h| PathBuf::from(h).join(".cache").join("g16")));
        Ok(Settings {
            #[cfg(feature = "cuda")]
            cuda: g16_cuda::CudaOptions {
                ordinal: 0,
                cache_dir: cache_dir.as_ref().map(|d| d.join("cuda")),
                ones_split: vars.flag("G16_CUDA_ONES_SPLIT")?.unwrap_or(true),
                msm: vars.msm(
                    [
                        "G16_CUDA_MSM_WINDOW",
                        "G16_CUDA_MSM_TABLE_WINDOW",
                        "G16_CUDA_MSM_PRECOMPUTE",
                        "G16_CUDA_MSM_PRECOMPUTE_MAX",
                    ],
                    g16_cuda::DEFAULT_TABLES,
                )?,
                g2_tables_max: vars.log2("G16_CUDA_MSM_PRECOMPUTE_MAX_G2")?.unwrap_or(g16_cuda::DEFAULT_G2_TABLES_MAX),
                table_shifts: vars
                    .parse("G16_CUDA_MSM_TABLE_SHIFTS", "a count of shifts, 0 to 20", |v| {
                        v.parse().ok().filter(|&k: &u32| k <= 20)
                    })?
                    .unwrap_or(g16_cuda::DEFAULT_TABLE_SHIFTS),
                table_build: vars
                    .parse("G16_CUDA_MSM_TABLE_BUILD", "background, blocking or off", |v| {
                        match v.to_ascii_lowercase().as_str() {
                            "background" => Some(g16_cuda::TableBuild::Background),
                            "blocking" => Some(g16_cuda::TableBuild::Blocking),
                            "off" => Some(g16_cuda::TableBuild::Off),
                            _ => None,
                        }
                    })?
                    .unwrap_or_default(),
                max_msm_entries: g16_cuda::MAX_MSM_ENTRIES,
                ntt_twiddles: vars
                    .parse("G16_CUDA_NTT_TWIDDLES", "table or split", |v| match v.to_ascii_lowercase().as_str() {
                        "table" => Some(g16_cuda::NttTwiddles::Table),
                        "split" => Some(g16_cuda::NttTwiddles::Split),
                        _ => None,
                    })?
                    .unwrap_or_default(),
                ntt_block: vars
                    .parse("G16_CUDA_NTT_BLOCK", "1024 or 512", |v| match v {
                        "1024" => Some(g16_cuda::NttBlock::Elems1024),
                        "512" => Some(g16_cuda::NttBlock::Elems512),
                        _ => None,
                    })?
                    .unwrap_or_default(),
                msm_accumulation: vars
                    .parse("G16_CUDA_MSM_ACCUMULATION", "buckets or chunks", |v| {
                        match v.to_ascii_lowercase().as_str() {
                            "buckets" => Some(g16_cuda::MsmAccumulation::Buckets),
                            "chunks" => Some(g16_cuda::MsmAccumulation::Chunks),
                            _ => None,
                        }
                    })?
                    .unwrap_or_default(),
                msm_scatter: vars
                    .parse("G16_CUDA_MSM_SCATTER", "auto, scalar or window", |v| {
                        match v.to_ascii_lowercase().as_str() {
                            "auto" => Some(g16_cuda::MsmScatter::Auto),
                            "scalar" => Some(g16_cuda::MsmScatter::ByScalar),
                            "window" => Some(g16_cuda::MsmScatter::ByWindow),
                            _ => None,
                        }
                    })?
                    .unwrap_or_default(),
                madd_fused_y: vars
                    .parse("G16_CUDA_MADD_FUSED_Y", "0, g1 or 1", |v| match v.to_ascii_lowercase().as_str() {
                        "0" | "off" => Some(g16_cuda::FusedY::Off),
                        "g1" => Some(g16_cuda::FusedY::G1),
                        "1" | "both" => Some(g16_cuda::FusedY::Both),
                        _ => None,
                    })?
                    .unwrap_or_default(),
            },
            #[cfg(feature = "wgpu")]
            wgpu: g16_wgpu::WgpuOptions {
                force_u32: vars
                    .parse("G16_WGPU_ARITH", "u32 or int64", |v| match v.to_ascii_lowercase().as_str() {
                        "u32" => Some(true),
                        "int64" => Some(false),
                        _ => None,
                    })?
                    .unwrap_or(false),
                subgroup_on_device: vars.parse("G16_WGPU_SUBGROUP", "device or host", |v| {
                    match v.to_ascii_lowercase().as_str() {
                        "device" => Some(true),
                        "host" => Some(false),
                        _ => None,
                    }
                })?,
                pipeline_cache: match vars.flag("G16_NO_PIPELINE_CACHE")? {
                    Some(true) => None,
                    _ => cache_dir.as_ref().map(|d| d.join("wgpu")),
                },
                msm: vars.msm(
                    [
                        "G16_WGPU_MSM_WINDOW",
                        "G16_WGPU_MSM_TABLE_WINDOW",
                        "G16_WGPU_MSM_PRECOMPUTE",
                        "G16_WGPU_MSM_PRECOMPUTE_MAX",
                    ],
                    g16_backend::msm_plan::DEFAULT_TABLES,
                )?,
                ..g16_wgpu::WgpuOptions::default()
            },
            cache_dir,
            // Last: the fields above have read every variable.
            given: vars.1.take(),
        })
    }

    /// These settings for benchmarks of the steady state: CUDA's shifted bases made before an
    /// upload returns (where they would be made in the background), so the first MSM after it
    /// has them as every later one does.
    pub fn steady_state(&self) -> Settings {
        #[allow(unused_mut)] // reason: only the CUDA build has a setting to change
        let mut steady = self.clone();
        #[cfg(feature = "cuda")]
        if steady.cuda.table_build == g16_cuda::TableBuild::Background {
            steady.cuda.table_build = g16_cuda::TableBuild::Blocking;
        }
        steady
    }

    /// The key store in the cache directory (or `./.g16-cache` where there is none).
    pub fn key_store(&self) -> KeyStore {
        KeyStore::new(self.cache_root())
    }

    /// The record of key files checked on this machine (`checked/` in the cache directory).
    pub fn checked_files(&self) -> CheckedFiles {
        CheckedFiles::new(self.cache_root().join("checked"))
    }

    /// The cache directory (`./.g16-cache` where none is set).
    pub fn cache_root(&self) -> PathBuf {
        self.cache_dir.clone().unwrap_or_else(|| PathBuf::from(".g16-cache"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &[(&str, &str)]) -> Result<Settings, SettingsError> {
        Settings::from_vars(|name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
    }

    /// With nothing set, each backend's MSM tuning is its options' default: CUDA's shifted
    /// bases reach 2^25 points, wgpu's stop below 2^23.
    #[test]
    #[cfg(all(feature = "cuda", feature = "wgpu"))]
    fn unset_msm_tuning_is_each_backends_default() {
        let defaults = from(&[("HOME", "/h")]).unwrap();
        assert_eq!(defaults.cuda.msm, g16_cuda::CudaOptions::default().msm);
        assert_eq!(defaults.wgpu.msm, g16_wgpu::WgpuOptions::default().msm);
        assert_eq!((defaults.cuda.msm.tables, defaults.wgpu.msm.tables), (Some((18, 25)), Some((18, 23))));
        assert_eq!(defaults.cuda.g2_tables_max, 24);
        assert_eq!(defaults.cuda.table_shifts, g16_cuda::CudaOptions::default().table_shifts);
    }

    /// One proof a process: the shifted bases off where they were left at their defaults, kept
    /// as given where a setting names them; nothing else changes.
    #[test]
    #[cfg(all(feature = "cuda", feature = "wgpu"))]
    fn one_proof_turns_default_shifted_bases_off_and_keeps_explicit_settings() {
        let defaults = from(&[("HOME", "/h")]).unwrap();
        let one = defaults.for_one_proof();
        assert_eq!(one.cuda.table_build, g16_cuda::TableBuild::Off);
        assert_eq!(one.wgpu.msm.tables, None);
        assert_eq!(
            (one.cache_dir.as_ref(), one.cuda.ones_split),
            (defaults.cache_dir.as_ref(), defaults.cuda.ones_split)
        );
        let given = from(&[
            ("G16_CUDA_MSM_TABLE_BUILD", "blocking"),
            ("G16_WGPU_MSM_PRECOMPUTE", "10"),
            ("G16_WGPU_MSM_PRECOMPUTE_MAX", "20"),
        ])
        .unwrap();
        assert_eq!(given.for_one_proof(), given, "explicit settings are kept");
    }

    #[test]
    fn the_cache_directory_follows_the_xdg_convention() {
        let dir = |pairs: &[(&str, &str)]| from(pairs).unwrap().cache_dir;
        assert_eq!(dir(&[("G16_CACHE_DIR", "/c"), ("HOME", "/h")]), Some(PathBuf::from("/c")));
        assert_eq!(dir(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]), Some(PathBuf::from("/x/g16")));
        assert_eq!(dir(&[("HOME", "/h")]), Some(PathBuf::from("/h/.cache/g16")));
        assert_eq!(dir(&[("G16_CACHE_DIR", ""), ("HOME", "/h")]), Some(PathBuf::from("/h/.cache/g16")));
        assert_eq!(dir(&[]), None);
        assert_eq!(from(&[]).unwrap().key_store().dir(), std::path::Path::new(".g16-cache"));
    }

    #[test]
    fn unset_variables_give_the_defaults() {
        let s = from(&[]).unwrap();
        #[cfg(feature = "cuda")]
        assert_eq!(s.cuda, g16_cuda::CudaOptions::default());
        #[cfg(feature = "wgpu")]
        assert_eq!(s.wgpu, g16_wgpu::WgpuOptions::default());
        let _ = s;
    }

    #[cfg(all(feature = "cuda", feature = "wgpu"))]
    #[test]
    fn variables_map_onto_the_options() {
        let s = from(&[
            ("G16_CACHE_DIR", "/c"),
            ("G16_CUDA_ONES_SPLIT", "0"),
            ("G16_CUDA_MSM_WINDOW", "13"),
            ("G16_CUDA_MSM_PRECOMPUTE", "0"),
            ("G16_CUDA_MSM_PRECOMPUTE_MAX_G2", "25"),
            ("G16_CUDA_MSM_TABLE_SHIFTS", "4"),
            ("G16_CUDA_MSM_TABLE_BUILD", "Blocking"),
            ("G16_CUDA_NTT_TWIDDLES", "split"),
            ("G16_CUDA_NTT_BLOCK", "1024"),
            ("G16_CUDA_MSM_ACCUMULATION", "buckets"),
            ("G16_CUDA_MSM_SCATTER", "Window"),
            ("G16_CUDA_MADD_FUSED_Y", "1"),
            ("G16_WGPU_ARITH", "u32"),
            ("G16_WGPU_SUBGROUP", "host"),
            ("G16_WGPU_MSM_TABLE_WINDOW", "17"),
            ("G16_WGPU_MSM_PRECOMPUTE", "10"),
            ("G16_WGPU_MSM_PRECOMPUTE_MAX", "20"),
        ])
        .unwrap();
        assert_eq!(s.cuda.cache_dir, Some(PathBuf::from("/c/cuda")));
        assert!(!s.cuda.ones_split);
        assert_eq!(s.cuda.msm, MsmTuning { window: Some(13), table_window: None, tables: None });
        assert_eq!(s.cuda.table_build, g16_cuda::TableBuild::Blocking);
        assert_eq!(s.cuda.g2_tables_max, 25);
        assert_eq!(s.cuda.table_shifts, 4);
        assert_eq!(s.cuda.ntt_twiddles, g16_cuda::NttTwiddles::Split);
        assert_eq!(s.cuda.ntt_block, g16_cuda::NttBlock::Elems1024);
        assert_eq!(s.cuda.msm_accumulation, g16_cuda::MsmAccumulation::Buckets);
        assert_eq!(s.cuda.msm_scatter, g16_cuda::MsmScatter::ByWindow);
        assert_eq!(s.cuda.madd_fused_y, g16_cuda::FusedY::Both);
        // Every tuning variable given is named, the cache directory not.
        assert_eq!(s.given.get("G16_CUDA_NTT_BLOCK").map(String::as_str), Some("1024"));
        assert_eq!(s.given.get("G16_WGPU_ARITH").map(String::as_str), Some("u32"));
        assert!(!s.given.contains_key("G16_CACHE_DIR"), "{:?}", s.given);
        assert!(s.wgpu.force_u32);
        assert_eq!(s.wgpu.subgroup_on_device, Some(false));
        assert_eq!(s.wgpu.pipeline_cache, Some(PathBuf::from("/c/wgpu")));
        assert_eq!(s.wgpu.msm, MsmTuning { window: None, table_window: Some(17), tables: Some((10, 20)) });
        let off = from(&[("G16_CACHE_DIR", "/c"), ("G16_NO_PIPELINE_CACHE", "1")]).unwrap();
        assert_eq!(off.wgpu.pipeline_cache, None);
    }

    #[cfg(all(feature = "cuda", feature = "wgpu"))]
    #[test]
    fn every_variable_read_is_known_to_the_cli() {
        let read = std::cell::RefCell::new(Vec::new());
        Settings::from_vars(|name| {
            read.borrow_mut().push(name.to_string());
            None
        })
        .unwrap();
        let read = read.into_inner();
        assert!(!cfg!(feature = "cuda") || read.iter().any(|n| n == "G16_CUDA_MSM_ACCUMULATION"), "{read:?}");
        for name in read.iter().filter(|n| n.starts_with("G16_")) {
            assert!(KNOWN.contains(&name.as_str()), "{name} is read but the CLI would call it ignored");
        }
    }

    #[cfg(all(feature = "cuda", feature = "wgpu"))]
    #[test]
    fn unusable_values_are_errors_that_name_the_variable() {
        for (name, value) in [
            ("G16_CUDA_ONES_SPLIT", "maybe"),
            ("G16_CUDA_MSM_WINDOW", "3"),
            ("G16_CUDA_MSM_WINDOW", "21"),
            ("G16_CUDA_NTT_TWIDDLES", "full"),
            ("G16_CUDA_NTT_BLOCK", "256"),
            ("G16_CUDA_MSM_ACCUMULATION", "warps"),
            ("G16_CUDA_MSM_SCATTER", "bucket"),
            ("G16_CUDA_MSM_TABLE_SHIFTS", "21"),
            ("G16_CUDA_MADD_FUSED_Y", "please"),
            ("G16_WGPU_MSM_TABLE_WINDOW", "7"),
            ("G16_WGPU_MSM_PRECOMPUTE", "41"),
            ("G16_WGPU_ARITH", "u16"),
            ("G16_WGPU_SUBGROUP", "gpu"),
            ("G16_NO_PIPELINE_CACHE", "please"),
        ] {
            let err = from(&[(name, value)]).expect_err(name);
            assert_eq!(err.name, name);
            assert!(err.to_string().starts_with(&format!("{name}=")), "{err}");
        }
    }
}
