//! How the engine is set up: its stages' sizes, the lock design, and which devices it runs on.

use g16_backend::named_choice;
use std::fmt;

use super::EngineError;
use g16_backend::BackendKind;

/// How device workers share a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LockDesign {
    /// One lock over the whole device section: staging, kernels and readback.
    Single,
    /// A staging lock (upload; free after readback) and a compute lock (kernels): one
    /// worker stages its inputs, or frees its memory, while another's kernels run. At most
    /// two partitions are on a device at once, and their memory is budgeted; where two do
    /// not fit, the device falls back to `Single`.
    Split,
}

impl LockDesign {
    pub const ALL: [LockDesign; 2] = [LockDesign::Single, LockDesign::Split];

    /// The names, in declaration order (a design's discriminant indexes them).
    const NAMES: [&'static str; 2] = ["single", "split"];

    pub fn name(&self) -> &'static str {
        Self::NAMES[*self as usize]
    }
}

named_choice!(LockDesign, name, EngineError, |s: &str| {
    EngineError::Config(format!("unknown lock design '{}' (expected single or split)", s.trim().to_ascii_lowercase()))
});

/// The engine's stages. Host memory in flight is bounded by about
/// `2 × synthesis_workers + channel_bound + devices × workers_per_device` synthesized
/// partitions (one being made and one waiting to be sent per synthesis worker, the
/// channel, one per device worker).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineConfig {
    /// Threads that synthesize partitions (arkworks synthesis is mostly single-threaded).
    pub synthesis_workers: usize,
    /// Synthesized partitions the channel holds before synthesis blocks.
    pub channel_bound: usize,
    /// Device workers per device.
    pub workers_per_device: usize,
    pub lock: LockDesign,
    /// Verify every proof in the finalizer (arkworks' verifier).
    pub verify: bool,
    /// Device workers start once this many synthesized partitions wait in the channel (at most
    /// `channel_bound`; 0: at once), or once no partition is left to synthesize. Where synthesis
    /// is slower than the devices, this measures the devices alone over the partitions queued.
    pub prefill: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            synthesis_workers: default_synthesis_workers(),
            channel_bound: 2,
            workers_per_device: 2,
            lock: LockDesign::Split,
            verify: true,
            prefill: 0,
        }
    }
}

/// Half the host's threads: synthesis is CPU work, and the device workers, the finalizer
/// and (on the CPU backend) the device itself need the rest.
pub fn default_synthesis_workers() -> usize {
    std::thread::available_parallelism().map(|n| n.get() / 2).unwrap_or(1).max(1)
}

impl EngineConfig {
    pub fn validate(&self) -> Result<(), EngineError> {
        for (what, n) in [
            ("synthesis workers", self.synthesis_workers),
            ("channel bound", self.channel_bound),
            ("workers per device", self.workers_per_device),
        ] {
            if n == 0 {
                return Err(EngineError::Config(format!("{what} must be at least 1")));
            }
        }
        if self.prefill > self.channel_bound {
            return Err(EngineError::Config(format!(
                "prefill ({}) must be at most the channel bound ({}): the channel never holds more",
                self.prefill, self.channel_bound
            )));
        }
        Ok(())
    }
}

/// One device of a device list: a concrete backend and its ordinal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeviceSpec {
    pub kind: BackendKind,
    pub ordinal: usize,
}

impl DeviceSpec {
    /// `cuda:0`, `cpu:1`: the device's name in timelines and reports.
    pub fn label(&self) -> String {
        format!("{}:{}", self.kind, self.ordinal)
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.ordinal)
    }
}

/// Parses a device list: comma-separated `KIND:ORDINAL` (`cuda:0,cuda:1`), or `KIND` /
/// `KIND:all` for every device of a backend, where `KIND` is `cpu`, `cuda`, `wgpu` or
/// `auto` (the first available backend, as `--backend auto` picks). On the CPU backend
/// any ordinal opens another instance over the same cores (`cpu:0,cpu:1`).
///
/// A backend with no devices still yields its device 0, so that opening it says why.
///
/// `device_count` counts a backend's usable devices; `auto_count` those `auto` may take (no
/// software adapters), so `--devices auto` picks what `--backend auto` picks. The crate that
/// assembles the backends knows both.
pub fn parse_device_list(
    list: &str,
    device_count: impl Fn(BackendKind) -> usize,
    auto_count: impl Fn(BackendKind) -> usize,
) -> Result<Vec<DeviceSpec>, EngineError> {
    let bad = |reason: String| EngineError::DeviceList { list: list.to_string(), reason };
    let mut specs: Vec<DeviceSpec> = Vec::new();
    for item in list.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(bad("an empty entry".to_string()));
        }
        let (kind, ordinal) = match item.split_once(':') {
            Some((kind, ordinal)) => (kind, Some(ordinal.trim())),
            None => (item, None),
        };
        let asked: BackendKind = kind.parse().map_err(|e: g16_backend::BackendError| bad(e.to_string()))?;
        let kind = match asked {
            BackendKind::Auto => {
                BackendKind::PREFERENCE.into_iter().find(|&k| auto_count(k) > 0).unwrap_or(BackendKind::Cpu)
            }
            concrete => concrete,
        };
        let count = if asked == BackendKind::Auto { auto_count(kind) } else { device_count(kind) };
        let ordinals: Vec<usize> = match ordinal {
            None | Some("all") => (0..count.max(1)).collect(),
            Some(n) => vec![n.parse().map_err(|_| bad(format!("'{item}': the ordinal must be a number or 'all'")))?],
        };
        for ordinal in ordinals {
            let spec = DeviceSpec { kind, ordinal };
            if specs.contains(&spec) {
                return Err(bad(format!("{spec} is listed twice")));
            }
            specs.push(spec);
        }
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(list: &str) -> Result<Vec<String>, EngineError> {
        let counts = |k: BackendKind| match k {
            BackendKind::Cuda => 2,
            BackendKind::Cpu => 1,
            _ => 0,
        };
        Ok(parse_device_list(list, counts, counts)?.iter().map(DeviceSpec::label).collect())
    }

    /// A host like CI's: no CUDA, one wgpu adapter that is software (lavapipe).
    fn parse_on_lavapipe(list: &str) -> Result<Vec<String>, EngineError> {
        let usable = |k: BackendKind| match k {
            BackendKind::Wgpu | BackendKind::Cpu => 1,
            _ => 0,
        };
        let for_auto = |k: BackendKind| if k == BackendKind::Wgpu { 0 } else { usable(k) };
        Ok(parse_device_list(list, usable, for_auto)?.iter().map(DeviceSpec::label).collect())
    }

    #[test]
    fn auto_never_picks_a_software_adapter_but_naming_it_does() {
        assert_eq!(parse_on_lavapipe("auto").unwrap(), ["cpu:0"], "as --backend auto: the CPU, not lavapipe");
        assert_eq!(parse_on_lavapipe("wgpu").unwrap(), ["wgpu:0"], "asked for by name, lavapipe is used");
    }

    #[test]
    fn device_lists_parse() {
        assert_eq!(parse("cpu:0,cpu:1").unwrap(), ["cpu:0", "cpu:1"]);
        assert_eq!(parse("cuda").unwrap(), ["cuda:0", "cuda:1"]);
        assert_eq!(parse(" cuda:all ").unwrap(), ["cuda:0", "cuda:1"]);
        assert_eq!(parse("auto").unwrap(), ["cuda:0", "cuda:1"]);
        assert_eq!(parse("wgpu").unwrap(), ["wgpu:0"], "no devices: device 0, whose opening says why");
        assert_eq!(parse("cuda:1,cpu").unwrap(), ["cuda:1", "cpu:0"]);
    }

    #[test]
    fn bad_device_lists_are_typed_errors() {
        for bad in ["", "cpu:0,", "metal:0", "cpu:x", "cpu:0,cpu:0", "cuda,cuda:1"] {
            assert!(matches!(parse(bad), Err(EngineError::DeviceList { .. })), "{bad:?}");
        }
        let msg = parse("cpu:0,cpu:0").unwrap_err().to_string();
        assert!(msg.contains("cpu:0 is listed twice"), "{msg}");
    }

    #[test]
    fn lock_designs_and_config() {
        for (i, d) in LockDesign::ALL.into_iter().enumerate() {
            assert_eq!(d as usize, i, "ALL and NAMES in declaration order");
            assert_eq!(d.name().parse::<LockDesign>().unwrap(), d);
        }
        assert!(matches!("double".parse::<LockDesign>(), Err(EngineError::Config(_))));
        assert!(EngineConfig::default().validate().is_ok());
        let zero = EngineConfig { channel_bound: 0, ..EngineConfig::default() };
        assert!(zero.validate().unwrap_err().to_string().contains("channel bound"));
    }
}
