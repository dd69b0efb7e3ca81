//! [`PerIp`]: a cap on the connections open at once from one IP address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

/// Connections open per address, capped (0: no cap, nothing is counted).
#[derive(Debug)]
pub(crate) struct PerIp {
    open: Mutex<HashMap<IpAddr, usize>>,
    max: usize,
}

/// One connection's place in its address's count; dropping it frees it.
#[derive(Debug)]
pub(crate) struct IpSeat {
    /// `None`: no cap, nothing counted.
    caps: Option<Arc<PerIp>>,
    ip: IpAddr,
}

impl PerIp {
    /// At most `max` connections per address (0: any number).
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            open: Mutex::new(HashMap::new()),
            max,
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
        self.open.lock()
    }

    /// A seat for one more connection from `ip`; `None` when `ip` already
    /// holds its cap.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<IpSeat> {
        if self.max == 0 {
            return Some(IpSeat { caps: None, ip });
        }
        let mut open = self.lock();
        let count = open.entry(ip).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(IpSeat {
            caps: Some(Arc::clone(self)),
            ip,
        })
    }
}

impl Drop for IpSeat {
    fn drop(&mut self) {
        let Some(caps) = &self.caps else { return };
        let mut open = caps.lock();
        if let Some(count) = open.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holds_at_most_its_cap_and_a_closed_seat_is_freed() {
        let caps = PerIp::new(2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let first = caps.admit(a).unwrap();
        let _second = caps.admit(a).unwrap();
        assert!(caps.admit(a).is_none());
        assert!(caps.admit(b).is_some(), "another address has room");
        drop(first);
        assert!(caps.admit(a).is_some());
    }

    #[test]
    fn no_cap_counts_nothing() {
        let caps = PerIp::new(0);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let seats: Vec<_> = (0..1000).map(|_| caps.admit(a).unwrap()).collect();
        assert_eq!(seats.len(), 1000);
        assert!(caps.lock().is_empty());
    }
}
