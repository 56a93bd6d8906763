//! Every tunable number of the search, named, with a line on what it is and a range for
//! tuning. In a normal build each is a constant the compiler folds in. Built with
//! `--features tune`, each is also a UCI spin option read at run time, so an SPSA tuner
//! (OpenBench's, for one) can drive them; `ferrite params` prints them in OpenBench's format.

#[cfg(feature = "tune")]
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// One parameter's description.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub default: i32,
    pub min: i32,
    pub max: i32,
    pub doc: &'static str,
}

impl Param {
    /// The SPSA step: a twentieth of the range, at least 1.
    pub fn step(&self) -> f64 {
        (f64::from(self.max - self.min) / 20.0).max(1.0)
    }
}

macro_rules! params {
    ($($(#[doc = $doc:literal])+ $name:ident = $default:literal, $min:literal..=$max:literal;)+) => {
        /// All parameters, in the order they are declared.
        pub const ALL: &[Param] = &[$(Param {
            name: stringify!($name),
            default: $default,
            min: $min,
            max: $max,
            doc: concat!($($doc),+),
        }),+];

        #[allow(non_camel_case_types)]
        #[repr(usize)]
        enum Index {
            $($name),+
        }

        #[cfg(feature = "tune")]
        static VALUES: [AtomicI32; ALL.len()] = [$(AtomicI32::new($default)),+];

        $(
            $(#[doc = $doc])+
            #[inline(always)]
            pub fn $name() -> i32 {
                #[cfg(feature = "tune")]
                {
                    VALUES[Index::$name as usize].load(Relaxed)
                }
                #[cfg(not(feature = "tune"))]
                {
                    let _ = Index::$name;
                    $default
                }
            }
        )+
    };
}

params! {
    /// Reverse futility pruning: the deepest node it applies to.
    rfp_depth = 8, 4..=14;
    /// Reverse futility pruning: centipawns above beta needed per ply of depth.
    rfp_margin = 70, 30..=150;
    /// Null move: the least depth it is tried at.
    nmp_depth = 3, 2..=6;
    /// Null move: the base reduction in plies.
    nmp_base = 3, 2..=5;
    /// Null move: one more ply of reduction per this many plies of depth.
    nmp_depth_divisor = 4, 2..=8;
    /// Null move: one more ply of reduction per this many centipawns above beta.
    nmp_eval_divisor = 200, 80..=400;
    /// Null move: at most this many plies of reduction for the eval's lead.
    nmp_eval_max = 3, 1..=5;
    /// Late move pruning: the deepest node it applies to.
    lmp_depth = 8, 4..=14;
    /// Late move pruning: quiets searched before the rest are skipped, beside depth squared.
    lmp_base = 3, 1..=8;
    /// Futility pruning of quiets: the deepest node it applies to.
    futility_depth = 8, 4..=14;
    /// Futility pruning: the margin at depth 0, in centipawns.
    futility_base = 100, 30..=250;
    /// Futility pruning: the margin added per ply of depth.
    futility_per_depth = 90, 40..=200;
    /// History pruning: the deepest node it applies to.
    history_prune_depth = 3, 1..=6;
    /// History pruning: a quiet whose history is below minus this per ply is skipped.
    history_prune = 2048, 512..=8192;
    /// SEE pruning: the deepest node it applies to.
    see_depth = 8, 4..=14;
    /// SEE pruning of quiets: material a quiet may lose, per ply of depth squared.
    see_quiet = 25, 10..=60;
    /// SEE pruning of captures: material a capture may lose, per ply of depth.
    see_capture = 90, 40..=200;
    /// Late-move reduction: the constant term, in hundredths of a ply.
    lmr_base = 75, 0..=150;
    /// Late-move reduction: ln(depth) * ln(move number) is divided by this, in hundredths.
    lmr_divisor = 225, 150..=350;
    /// Late-move reduction: history worth one ply less (or more) reduction.
    lmr_history = 10000, 4000..=20000;
    /// After a reduced search beats alpha: a ply deeper when it beats the best score so far
    /// by this, plus two per ply of depth.
    deeper_margin = 40, 0..=120;
    /// After a reduced search beats alpha: a ply shallower when it beats the best score so far
    /// by less than this.
    shallower_margin = 10, 0..=40;
    /// Internal iterative reduction: the least depth of a node without a table move that is
    /// searched a ply shallower.
    iir_depth = 4, 2..=8;
    /// Singular extension: the least depth at which the table move is tested.
    singular_depth = 8, 5..=12;
    /// Singular extension: the bar lies this much below the table's score per ply of depth.
    singular_margin = 2, 1..=5;
    /// Singular extension: centipawns below the bar the other moves must stay for the table
    /// move to be extended two plies (off the PV).
    double_extension_margin = 25, 5..=80;
    /// Aspiration windows: the first half-width, in centipawns.
    aspiration_delta = 20, 8..=50;
    /// Delta pruning in quiescence: a capture must be able to reach alpha with this margin.
    delta_margin = 200, 50..=400;
    /// History bonus per ply of depth squared.
    history_bonus_scale = 16, 4..=40;
    /// The largest history bonus.
    history_bonus_max = 1600, 400..=4000;
    /// Time by node share: the soft deadline is scaled by `(base - slope * share) / 100` (at
    /// least a half), where `share` is the fraction of the root's nodes spent under the best
    /// move: 200 and 125 leave the deadline as it is at a typical share of 0.8, stretch it
    /// where the best move is contested and cut it where it dominates (100 and 0 turn it
    /// off). Against off at 5+0.05: +16.0 +/- 17.0 Elo in 540 games (seed 2860).
    tm_node_base = 200, 100..=300;
    /// Time by node share: how much a dominant best move shortens the think, per unit of share.
    tm_node_slope = 125, 0..=250;
    /// The soft deadline (no new iteration after it), in percent of the move's share of the
    /// clock (what is left over the moves to go, plus three quarters of the increment).
    tm_soft_percent = 60, 30..=90;
}

/// The parameters as OpenBench's SPSA input: `name, int, value, min, max, step, rate`.
pub fn spsa_list() -> String {
    ALL.iter()
        .zip(values())
        .map(|(p, value)| {
            format!(
                "{}, int, {value}, {}, {}, {}, 0.002\n",
                p.name,
                p.min,
                p.max,
                p.step()
            )
        })
        .collect()
}

/// The values in use, in the order of `ALL`.
pub fn values() -> Vec<i32> {
    #[cfg(feature = "tune")]
    {
        VALUES.iter().map(|v| v.load(Relaxed)).collect()
    }
    #[cfg(not(feature = "tune"))]
    {
        ALL.iter().map(|p| p.default).collect()
    }
}

/// Why a parameter could not be set.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ParamError {
    #[error("no search parameter '{0}'")]
    Unknown(String),
    #[error("{} takes {} to {}, not {value}", .param.name, .param.min, .param.max)]
    OutOfRange { param: Param, value: i32 },
}

/// Sets the parameter `name` (any case) for the searches that start after it.
#[cfg(feature = "tune")]
pub fn set(name: &str, value: i32) -> Result<(), ParamError> {
    let index = ALL
        .iter()
        .position(|p| p.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| ParamError::Unknown(name.to_string()))?;
    let p = &ALL[index];
    if !(p.min..=p.max).contains(&value) {
        return Err(ParamError::OutOfRange { param: *p, value });
    }
    VALUES[index].store(value, Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_lies_in_its_range_and_names_are_unique() {
        for (i, p) in ALL.iter().enumerate() {
            assert!(p.min <= p.default && p.default <= p.max, "{}", p.name);
            assert!(!p.doc.is_empty(), "{}", p.name);
            assert!(ALL[..i].iter().all(|q| q.name != p.name), "{}", p.name);
        }
        assert_eq!(rfp_margin(), ALL[Index::rfp_margin as usize].default);
        let list = spsa_list();
        assert_eq!(list.lines().count(), ALL.len());
        assert!(
            list.starts_with("rfp_depth, int, 8, 4, 14, 1, 0.002\n"),
            "{list}"
        );
    }
}
