//! Facts about the machine a measurement runs on.

/// `MemAvailable` from the text of `/proc/meminfo`, in bytes (the file gives kB = KiB); `None`
/// when the line is missing or malformed, or the figure overflows `u64`.
pub fn mem_available(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix("MemAvailable:")?;
        let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kib.checked_mul(1024)
    })
}
