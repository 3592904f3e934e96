//! Where and when the report was made.

/// Where and when: shown at the top of the report.
#[derive(Debug, Clone)]
pub struct Machine {
    /// The CPU's model name (`unknown CPU` where the system does not say).
    pub cpu: String,
    /// Logical cores available to this process (0 if unknown).
    pub cores: usize,
    /// The compiler's version line (`rustc --version`, or `rustc (version unknown)`).
    pub rustc: String,
    /// The vector/bit-manipulation features the code was compiled for (`.cargo/config.toml` builds
    /// for the machine's own CPU), e.g. `avx2, bmi2, avx512f`.
    pub features: String,
    /// When the report was generated, as [`crate::date::date_utc`] prints it.
    pub generated: String,
}

impl Machine {
    /// This machine: the CPU model from `/proc/cpuinfo`, the cores available, `rustc --version`
    /// (`$RUSTC` if set), the target features this crate was compiled with, and the time now.
    ///
    /// The features are those of this build; every crate of the workspace, the bench included, is
    /// compiled with the same flags (`.cargo/config.toml`), so they are the bench's too.
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| {
                let (key, value) = l.split_once(':')?;
                (key.trim() == "model name").then(|| value.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        let rustc = std::process::Command::new(std::env::var_os("RUSTC").unwrap_or("rustc".into()))
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map_or_else(|| "rustc (version unknown)".into(), |s| s.trim().to_owned());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let features: Vec<&str> = [
            ("sse4.2", cfg!(target_feature = "sse4.2")),
            ("avx2", cfg!(target_feature = "avx2")),
            ("bmi2", cfg!(target_feature = "bmi2")),
            ("avx512f", cfg!(target_feature = "avx512f")),
            ("neon", cfg!(target_feature = "neon")),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect();
        Machine {
            cpu,
            cores,
            rustc,
            features: if features.is_empty() {
                "baseline only".into()
            } else {
                features.join(", ")
            },
            generated: crate::date::date_utc(now),
        }
    }
}
