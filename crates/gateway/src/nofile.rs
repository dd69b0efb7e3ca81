//! The open-file limit: every connection and push socket is a file, so the
//! gateway raises its soft `RLIMIT_NOFILE` to the hard limit when it starts.

/// Raises the soft open-file limit to the hard one; returns the limit now
/// in force (`None` if it cannot be read).
pub(crate) fn raise_to_hard_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads one rlimit struct we own.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return Some(raised.rlim_cur);
        }
    }
    Some(limit.rlim_cur)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_soft_limit_ends_at_the_hard_one() {
        let now = super::raise_to_hard_limit().expect("getrlimit works");
        assert!(now > 0);
        assert_eq!(super::raise_to_hard_limit(), Some(now));
    }
}
