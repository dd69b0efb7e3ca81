//! The demo's `--link` flags: put all or some bots behind the impairment
//! proxy (`hightick-netem`), which runs in this process on its own thread.

use clap::Args;
use hightick_lab::load::LinkSpec;

/// Flags that put bots behind an emulated link.
#[derive(Debug, Args)]
pub(crate) struct LinkArgs {
    /// Put bots behind the impairment proxy on this link: lan, wifi,
    /// mobile, bad, or a profile file (TOML).
    #[arg(long, value_name = "PROFILE")]
    link: Option<String>,
    /// Share of the bots behind the link, 0.0 to 1.0, spread over every
    /// match's seats.
    #[arg(long, default_value_t = 1.0, requires = "link")]
    link_share: f64,
    /// Seed of the proxy's decisions.
    #[arg(long, default_value_t = 1, requires = "link")]
    link_seed: u64,
}

impl LinkArgs {
    /// The load run's link, if one was asked for.
    pub(crate) fn spec(&self) -> Option<LinkSpec> {
        self.link.as_ref().map(|link| LinkSpec {
            link: link.clone(),
            share: self.link_share,
            seed: self.link_seed,
        })
    }
}
