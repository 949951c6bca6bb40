//! Time-domain reference solver (work in progress).
