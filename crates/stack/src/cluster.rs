//! [`PrivateCluster`]: a PostgreSQL cluster of the stack's own, made with
//! `initdb` in a temporary directory and served on a free loopback port, so
//! the `restart-postgres` drill can stop and start it without touching any
//! other database. Run as root, the PostgreSQL programs run as the
//! `postgres` user (`runuser`); the binaries come from
//! `/usr/lib/postgresql/<newest>/bin`, else `$PATH`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::StackError;

/// A PostgreSQL cluster in a temporary directory; stopped and removed on drop.
#[derive(Debug)]
pub(crate) struct PrivateCluster {
    root: PathBuf,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl PrivateCluster {
    /// Makes a cluster with `initdb` and starts it; why not, if it cannot.
    pub(crate) fn start() -> Result<Self, StackError> {
        let bin =
            binaries().ok_or_else(|| fail("no initdb in /usr/lib/postgresql/*/bin or $PATH"))?;
        // SAFETY: geteuid has no preconditions.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let port = free_port()?;
        let root = std::env::temp_dir().join(format!(
            "hightick-pg-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        let cluster = Self {
            root,
            bin,
            port,
            as_postgres,
        };
        // As the user the server runs as, so it owns its files.
        cluster.run(
            "mkdir",
            &["-m", "700", &cluster.root.display().to_string()],
            false,
        )?;
        let data = cluster.data();
        cluster.run(
            "initdb",
            &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync"],
            true,
        )?;
        cluster.start_server()?;
        Ok(cluster)
    }

    /// The URL the gateway connects with.
    pub(crate) fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops the server (`pg_ctl stop -m fast`: connections are cut).
    pub(crate) fn stop_server(&self) -> Result<(), StackError> {
        let data = self.data();
        self.run("pg_ctl", &["-D", &data, "-m", "fast", "-w", "stop"], true)
    }

    /// Starts the server (again) and waits until it takes connections.
    pub(crate) fn start_server(&self) -> Result<(), StackError> {
        let data = self.data();
        let log = self.root.join("postgres.log").display().to_string();
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.root.display()
        );
        self.run(
            "pg_ctl",
            &["-D", &data, "-l", &log, "-o", &options, "-w", "start"],
            true,
        )
    }

    fn data(&self) -> String {
        self.root.join("data").display().to_string()
    }

    /// Runs `program args` (a PostgreSQL binary when `postgres_bin`), as
    /// the `postgres` user when we are root.
    fn run(&self, program: &str, args: &[&str], postgres_bin: bool) -> Result<(), StackError> {
        let program = if postgres_bin {
            self.bin.join(program)
        } else {
            PathBuf::from(program)
        };
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        let output = command
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(StackError::io(&program))?;
        if output.status.success() {
            return Ok(());
        }
        Err(fail(&format!(
            "{} {}: {}; {}",
            program.display(),
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self.run(
            "pg_ctl",
            &["-D", &data, "-m", "immediate", "-w", "stop"],
            true,
        );
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn fail(reason: &str) -> StackError {
    StackError::Child {
        name: "private PostgreSQL".to_owned(),
        reason: reason.to_owned(),
    }
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding `initdb`, else
/// the directory of the `initdb` on `$PATH`.
fn binaries() -> Option<PathBuf> {
    let installed = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .max_by_key(|(v, _)| *v)
        .map(|(_, bin)| bin);
    installed.or_else(|| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths).find(|p| Path::new(p).join("initdb").exists())
        })
    })
}

/// A loopback port free now.
fn free_port() -> Result<u16, StackError> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(StackError::io(Path::new("127.0.0.1:0")))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(StackError::io(Path::new("127.0.0.1:0")))
}
