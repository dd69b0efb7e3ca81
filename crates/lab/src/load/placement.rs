//! Where server instances run when they are bound: instance `i` on NUMA node
//! `i mod nodes`, as `numactl --cpunodebind` would place it, and the instances that
//! share a node split its CPUs into disjoint sets (so on a one-node host binding still
//! gives each instance CPUs of its own).

use std::path::Path;

use crate::doctor::host_files::{HostFiles, parse_cpu_list};

const NODE_DIR: &str = "sys/devices/system/node";

/// The CPUs this process may run on (its affinity mask), in order.
pub(crate) fn allowed_cpus() -> Vec<u32> {
    hightick_process::process_cpus()
        .into_iter()
        .filter_map(|cpu| u32::try_from(cpu).ok())
        .collect()
}

/// Each NUMA node's CPU list under `root` (`/` for this machine), in node order.
pub(crate) fn numa_nodes(root: &Path) -> Vec<Vec<u32>> {
    let host = HostFiles::new(root);
    host.numbered(NODE_DIR, "node")
        .into_iter()
        .filter_map(|(_, name)| {
            host.read(&format!("{NODE_DIR}/{name}/cpulist"))
                .and_then(|t| parse_cpu_list(&t))
        })
        .collect()
}

/// The CPU set of each of `instances` bound instances, given the nodes' CPU lists and
/// the CPUs allowed to this process. Nodes with no allowed CPU are skipped; without
/// node information every allowed CPU is one node.
pub fn instance_cpu_sets(instances: usize, nodes: &[Vec<u32>], allowed: &[u32]) -> Vec<Vec<u32>> {
    let mut usable: Vec<Vec<u32>> = nodes
        .iter()
        .map(|cpus| {
            cpus.iter()
                .copied()
                .filter(|c| allowed.contains(c))
                .collect()
        })
        .filter(|cpus: &Vec<u32>| !cpus.is_empty())
        .collect();
    if usable.is_empty() {
        usable.push(allowed.to_vec());
    }
    let n = usable.len();
    (0..instances)
        .map(|i| {
            let cpus = &usable[i % n];
            if cpus.is_empty() {
                return Vec::new();
            }
            let sharing = (instances - i % n).div_ceil(n);
            let k = i / n;
            if sharing > cpus.len() {
                return vec![cpus[k % cpus.len()]];
            }
            // `sharing` contiguous chunks whose sizes differ by at most one.
            let start = k * cpus.len() / sharing;
            let end = (k + 1) * cpus.len() / sharing;
            cpus[start..end].to_vec()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_go_to_node_i_mod_nodes_and_split_its_cpus() {
        let nodes = vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]];
        let all: Vec<u32> = (0..8).collect();
        assert_eq!(
            instance_cpu_sets(4, &nodes, &all),
            vec![vec![0, 1], vec![4, 5], vec![2, 3], vec![6, 7]]
        );
        assert_eq!(
            instance_cpu_sets(2, &nodes, &all),
            vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]
        );
        assert_eq!(
            instance_cpu_sets(3, &nodes, &all),
            vec![vec![0, 1], vec![4, 5, 6, 7], vec![2, 3]]
        );
    }

    #[test]
    fn a_one_node_host_gives_each_instance_its_own_cpus() {
        let one = vec![vec![0, 1]];
        assert_eq!(instance_cpu_sets(1, &one, &[0, 1]), vec![vec![0, 1]]);
        assert_eq!(instance_cpu_sets(2, &one, &[0, 1]), vec![vec![0], vec![1]]);
        // More instances than CPUs: they share, round robin.
        assert_eq!(
            instance_cpu_sets(3, &one, &[0, 1]),
            vec![vec![0], vec![1], vec![0]]
        );
    }

    #[test]
    fn only_allowed_cpus_are_used_and_missing_nodes_mean_one() {
        let nodes = vec![vec![0, 1], vec![2, 3]];
        assert_eq!(
            instance_cpu_sets(2, &nodes, &[2, 3]),
            vec![vec![2], vec![3]]
        );
        assert_eq!(instance_cpu_sets(2, &[], &[5, 6]), vec![vec![5], vec![6]]);
    }

    #[test]
    fn this_machine_has_allowed_cpus_and_reads_its_nodes() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        let nodes = numa_nodes(Path::new("/"));
        let sets = instance_cpu_sets(2, &nodes, &allowed);
        assert_eq!(sets.len(), 2);
        assert!(
            sets.iter()
                .all(|s| !s.is_empty() && s.iter().all(|c| allowed.contains(c)))
        );
    }

    #[test]
    fn node_files_are_read_from_a_fixture_tree() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor/untuned");
        let nodes = numa_nodes(&root);
        assert_eq!(nodes.len(), 2);
        assert!(nodes.iter().all(|n| !n.is_empty()));
    }
}
