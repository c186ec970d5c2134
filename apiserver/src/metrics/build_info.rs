//! What the server is: `kubernetes_build_info`, with the version `/version`
//! reports. (What the process uses, `process_*`, comes from
//! `rtcd_metrics::process`, shared with the etcd side.)

use super::family::{Kind, Meta, Stability};

const BUILD_INFO: Meta = Meta::new(
    "kubernetes_build_info",
    Kind::Gauge,
    Stability::Beta,
    "A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
);
/// `version.Info`, as `/version` serves it.
#[derive(Debug, Clone, Default)]
pub struct BuildInfo {
    pub major: String,
    pub minor: String,
    pub git_version: String,
    pub git_commit: String,
    pub git_tree_state: String,
    pub build_date: String,
    pub go_version: String,
    pub compiler: String,
    pub platform: String,
}

impl BuildInfo {
    pub fn write(&self, out: &mut String) {
        let names = [
            "major",
            "minor",
            "git_version",
            "git_commit",
            "git_tree_state",
            "build_date",
            "go_version",
            "compiler",
            "platform",
        ];
        let values = [
            self.major.as_str(),
            &self.minor,
            &self.git_version,
            &self.git_commit,
            &self.git_tree_state,
            &self.build_date,
            &self.go_version,
            &self.compiler,
            &self.platform,
        ];
        BUILD_INFO.write(out, names, [(values, 1.0)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_info_is_one_series_labelled_as_version() {
        let info = BuildInfo {
            major: "1".into(),
            minor: "37".into(),
            git_version: "v1.37.0".into(),
            ..Default::default()
        };
        let mut out = String::new();
        info.write(&mut out);
        assert!(out.contains("kubernetes_build_info{"), "{out}");
        assert!(out.contains("git_version=\"v1.37.0\""), "{out}");
        assert!(out.trim_end().ends_with(" 1"), "{out}");
    }
}
