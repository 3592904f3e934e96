//! Shared glue for the bloomlab binaries (flag parsing helpers, exit codes).
