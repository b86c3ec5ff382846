//! Settings from the environment, read once when a command starts and passed down as typed
//! options: nothing below this module reads a `G16_*` variable. docs/tuning.md lists every
//! name, its values and its default.

use std::path::PathBuf;

use g16_core::key_store::KeyStore;

/// A variable whose value cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{name}={value:?}: {expected}")]
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
}

impl Settings {
    /// The settings the process environment gives.
    pub fn from_env() -> Result<Settings, SettingsError> {
        Settings::from_vars(|name| std::env::var(name).ok())
    }

    /// The settings `var` gives (the environment, or a test's table).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Settings, SettingsError> {
        let cache_dir = var("G16_CACHE_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| var("XDG_CACHE_HOME").filter(|d| !d.is_empty()).map(|x| PathBuf::from(x).join("g16")))
            .or_else(|| var("HOME").filter(|d| !d.is_empty()).map(|h| PathBuf::from(h).join(".cache").join("g16")));
        Ok(Settings { cache_dir })
    }

    /// The key store in the cache directory (or `./.g16-cache` where there is none).
    pub fn key_store(&self) -> KeyStore {
        KeyStore::new(self.cache_dir.clone().unwrap_or_else(|| PathBuf::from(".g16-cache")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &[(&str, &str)]) -> Result<Settings, SettingsError> {
        Settings::from_vars(|name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn the_cache_directory_follows_the_xdg_convention() {
        let dir = |pairs: &[(&str, &str)]| from(pairs).unwrap().cache_dir;
        assert_eq!(dir(&[("G16_CACHE_DIR", "/c"), ("HOME", "/h")]), Some(PathBuf::from("/c")));
        assert_eq!(dir(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]), Some(PathBuf::from("/x/g16")));
        assert_eq!(dir(&[("HOME", "/h")]), Some(PathBuf::from("/h/.cache/g16")));
        assert_eq!(dir(&[]), None);
        assert_eq!(from(&[]).unwrap().key_store().dir(), std::path::Path::new(".g16-cache"));
    }
}
