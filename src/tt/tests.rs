use super::*;
use crate::types::MATE;

/// A well-mixed key stream for tests, reproducible from its seed.
fn next_key(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    crate::rng::mix(*state)
}

/// A table write from its fields, in the order a search knows them.
#[allow(clippy::too_many_arguments)]
fn store(
    tt: &Tt,
    key: u64,
    ply: i32,
    mv: u16,
    score: i32,
    raw_eval: i32,
    depth: i32,
    bound: Bound,
) -> StoreOutcome {
    tt.store(&Record {
        key,
        ply,
        mv,
        score,
        raw_eval,
        depth,
        bound,
    })
}

fn small_table(buckets: usize) -> Tt {
    Tt::with_buckets(buckets, PagePolicy::Small).unwrap()
}

/// Buckets of the tables whose replacement tests need several keys in one bucket: not a power
/// of two, so the multiply-shift index is exercised as the engine uses it.
const TEST_BUCKETS: usize = 61;

/// `count` distinct keys that the table's own index puts in one bucket.
fn keys_in_one_bucket(tt: &Tt, count: usize) -> Vec<u64> {
    let mut state = 0x5EED;
    let first = next_key(&mut state);
    let bucket = tt.bucket_index(first);
    let mut keys = vec![first];
    while keys.len() < count {
        let key = next_key(&mut state);
        if tt.bucket_index(key) == bucket {
            keys.push(key);
        }
    }
    keys
}

#[test]
fn bucket_is_one_aligned_cache_line() {
    assert_eq!(size_of::<Bucket>(), 64);
    assert_eq!(align_of::<Bucket>(), 64);
    let tt = Tt::new(1).unwrap();
    assert_eq!(tt.entries(), 65_536, "a MiB holds 65,536 entries");
    assert_eq!(tt.buckets().as_ptr() as usize % 64, 0);
}

#[test]
fn pack_round_trips_every_field_over_its_full_range() {
    let check = |mv: u16, score: i32, eval: i32, depth: i32, bound: Bound, generation: u8| {
        let data = Data::pack(mv, score, eval, depth, bound, generation);
        assert_eq!(
            (
                data.mv(),
                data.score(),
                data.eval(),
                data.depth(),
                data.bound(),
                data.generation()
            ),
            (mv, score, eval, depth, bound, generation)
        );
    };
    for mv in 0..=u16::MAX {
        check(mv, -1, 1, 3, Bound::Lower, 63);
    }
    for value in i16::MIN as i32..=i16::MAX as i32 {
        check(
            0xFFFF,
            value,
            -value.max(-i16::MAX as i32),
            -8,
            Bound::Exact,
            0,
        );
        check(
            1,
            -value.max(-i16::MAX as i32),
            value,
            247,
            Bound::Upper,
            17,
        );
    }
    for depth in -8..=247 {
        check(0x1234, -MATE + 5, -32_768, depth, Bound::Exact, 42);
    }
    for bound in [Bound::None, Bound::Upper, Bound::Lower, Bound::Exact] {
        for generation in 0..=63 {
            check(0x0FC0, MATE - 1, 32_767, -1, bound, generation);
        }
    }
}

#[test]
fn quiescence_depths_down_to_minus_eight_are_stored_and_probed() {
    let tt = small_table(16);
    for (i, depth) in (-8..=0).enumerate() {
        let key = 0x1000_0000_0000_0000 * (i as u64 % 15 + 1) + i as u64;
        store(&tt, key, 0, 0, 10, 20, depth, Bound::Upper);
        assert_eq!(tt.probe(key, 0).unwrap().depth, depth);
    }
}

#[test]
fn mate_scores_keep_their_distance_across_plies() {
    let tt = small_table(16);
    // Found at ply 3: we mate in 5 more plies, so the root sees mate in 8.
    store(&tt, 11, 3, 0, MATE - 8, 0, 6, Bound::Exact);
    // Reached again at ply 7 through a transposition: still 5 plies from this node.
    assert_eq!(tt.probe(11, 7).unwrap().score, MATE - 12);
    assert_eq!(tt.probe(11, 3).unwrap().score, MATE - 8);

    store(&tt, 12, 4, 0, -MATE + 6, 0, 6, Bound::Lower);
    assert_eq!(tt.probe(12, 1).unwrap().score, -MATE + 3);
    assert_eq!(tt.probe(12, 10).unwrap().score, -MATE + 12);

    // Ordinary scores are not adjusted.
    store(&tt, 13, 9, 0, -250, 0, 6, Bound::Upper);
    assert_eq!(tt.probe(13, 2).unwrap().score, -250);
}

#[test]
fn empty_entry_never_matches_key_zero() {
    let tt = small_table(4);
    assert_eq!(tt.probe(0, 0), None);
    store(&tt, 0, 0, 0x0101, 5, 6, 7, Bound::Exact);
    let hit = tt.probe(0, 0).unwrap();
    assert_eq!((hit.mv, hit.score, hit.eval, hit.depth), (0x0101, 5, 6, 7));
}

#[test]
fn empty_slots_are_filled_before_anything_is_evicted() {
    let tt = small_table(TEST_BUCKETS);
    let keys = keys_in_one_bucket(&tt, 4);
    for (i, &key) in keys.iter().enumerate() {
        store(&tt, key, 0, i as u16 + 1, 0, 0, 1, Bound::Exact);
    }
    for (i, &key) in keys.iter().enumerate() {
        assert_eq!(tt.probe(key, 0).unwrap().mv, i as u16 + 1);
    }
}

#[test]
fn same_key_keeps_a_much_deeper_fresh_entry_unless_exact() {
    let tt = small_table(1);
    store(&tt, 77, 0, 1, 100, 0, 12, Bound::Lower);
    store(&tt, 77, 0, 2, 50, 0, 7, Bound::Upper);
    assert_eq!(
        tt.probe(77, 0).unwrap().depth,
        12,
        "shallow non-exact refused"
    );
    store(&tt, 77, 0, 3, 60, 0, 8, Bound::Lower);
    assert_eq!(
        tt.probe(77, 0).unwrap().depth,
        8,
        "within four plies overwrites"
    );
    store(&tt, 77, 0, 4, 70, 0, 20, Bound::Lower);
    store(&tt, 77, 0, 5, 80, 0, 2, Bound::Exact);
    assert_eq!(tt.probe(77, 0).unwrap().depth, 2, "exact always overwrites");
}

#[test]
fn same_key_deeper_entry_from_an_old_search_is_overwritten() {
    let mut tt = small_table(1);
    store(&tt, 77, 0, 1, 100, 0, 12, Bound::Lower);
    tt.new_search();
    store(&tt, 77, 0, 2, 50, 0, 3, Bound::Upper);
    let hit = tt.probe(77, 0).unwrap();
    assert_eq!((hit.depth, hit.bound, hit.mv), (3, Bound::Upper, 2));
}

#[test]
fn same_key_store_without_move_keeps_the_old_move() {
    let tt = small_table(1);
    store(&tt, 5, 0, 0x0ABC, 10, 0, 4, Bound::Lower);
    store(&tt, 5, 0, 0, 20, 0, 5, Bound::Upper);
    let hit = tt.probe(5, 0).unwrap();
    assert_eq!((hit.mv, hit.score, hit.depth), (0x0ABC, 20, 5));
    store(&tt, 5, 0, 0x0DEF, 30, 0, 6, Bound::Exact);
    assert_eq!(tt.probe(5, 0).unwrap().mv, 0x0DEF);
}

#[test]
fn shallowest_entry_is_evicted_within_a_generation() {
    let tt = small_table(TEST_BUCKETS);
    let keys = keys_in_one_bucket(&tt, 5);
    for (&key, depth) in keys.iter().zip([9, 3, 7, 5]) {
        store(&tt, key, 0, 0, 0, 0, depth, Bound::Exact);
    }
    store(&tt, keys[4], 0, 0, 0, 0, 1, Bound::Exact);
    assert!(tt.probe(keys[1], 0).is_none(), "depth 3 was the shallowest");
    for i in [0, 2, 3, 4] {
        assert!(tt.probe(keys[i], 0).is_some());
    }
}

#[test]
fn older_entries_give_way_before_deeper_fresh_ones() {
    let mut tt = small_table(TEST_BUCKETS);
    let keys = keys_in_one_bucket(&tt, 5);
    store(&tt, keys[0], 0, 0, 0, 0, 20, Bound::Exact); // deep but three generations old
    tt.new_search();
    store(&tt, keys[1], 0, 0, 0, 0, 10, Bound::Exact); // two generations old
    tt.new_search();
    tt.new_search();
    store(&tt, keys[2], 0, 0, 0, 0, 1, Bound::Exact);
    store(&tt, keys[3], 0, 0, 0, 0, 2, Bound::Exact);
    // Values: 20 - 24 = -4, 10 - 16 = -6, 1, 2: the two-generations-old entry goes.
    store(&tt, keys[4], 0, 0, 0, 0, 0, Bound::Exact);
    assert!(tt.probe(keys[1], 0).is_none());
    assert!(tt.probe(keys[0], 0).is_some());
}

#[test]
fn generation_age_wraps_around_six_bits() {
    let mut tt = small_table(TEST_BUCKETS);
    let keys = keys_in_one_bucket(&tt, 5);
    for _ in 0..62 {
        tt.new_search();
    }
    assert_eq!(tt.generation(), 62);
    store(&tt, keys[0], 0, 0, 0, 0, 30, Bound::Exact); // generation 62
    tt.new_search();
    tt.new_search();
    tt.new_search(); // generation 1: the entry is 3 old, not 61 "in the future"
    assert_eq!(tt.generation(), 1);
    assert_eq!(
        age(tt.generation(), Data::pack(0, 0, 0, 0, Bound::Exact, 62)),
        3
    );
    store(&tt, keys[1], 0, 0, 0, 0, 5, Bound::Exact);
    store(&tt, keys[2], 0, 0, 0, 0, 5, Bound::Exact);
    store(&tt, keys[3], 0, 0, 0, 0, 7, Bound::Exact);
    // 30 - 24 = 6 beats 5 and 5: one of the depth-5 entries is evicted, not the old one.
    store(&tt, keys[4], 0, 0, 0, 0, 9, Bound::Exact);
    assert!(tt.probe(keys[0], 0).is_some());
    assert!(tt.probe(keys[1], 0).is_none());
}

#[test]
fn index_is_uniform_over_a_table_that_is_not_a_power_of_two() {
    let n = 1000;
    let tt = small_table(n);
    let mut counts = vec![0u32; n];
    let mut state = 1;
    let samples = 1_000_000;
    for _ in 0..samples {
        counts[tt.bucket_index(next_key(&mut state))] += 1;
    }
    assert_eq!(tt.bucket_index(u64::MAX), n - 1);
    assert_eq!(tt.bucket_index(0), 0);
    let expected = samples as f64 / n as f64;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    // 999 degrees of freedom: mean 999, sd ~45; 1200 is over four sd out.
    assert!(chi2 < 1200.0, "chi-square {chi2}");
    assert!(counts.iter().all(|&c| c > 800 && c < 1200), "{counts:?}");
}

/// Each key's data is a function of the key, so any hit whose data is not that function
/// read halves of two different writes.
fn data_for(key: u64) -> (u16, i32, i32) {
    (
        key as u16,
        (key >> 16) as i16 as i32 / 2,
        (key >> 32) as i16 as i32,
    )
}

/// A probe of the entry layout without the XOR, to show what the XOR guards against.
fn probe_plain(tt: &Tt, key: u64) -> Option<(u16, i32, i32)> {
    let bucket = tt.bucket(key);
    (0..4).find_map(|i| {
        let data = Data(bucket.0[2 * i + 1].load(Relaxed));
        (bucket.0[2 * i].load(Relaxed) == key && !data.is_empty())
            .then(|| (data.mv(), data.score(), data.eval()))
    })
}

/// A stress test: several threads store and probe keys from a small set that shares one
/// bucket for `rounds` iterations each. Returns (hits, torn hits).
fn hammer(tt: &Tt, rounds: usize) -> (usize, usize) {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2)
        * 2;
    let mut seed = 99;
    let keys: Vec<u64> = (0..16).map(|_| next_key(&mut seed)).collect();
    let results: Vec<(usize, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let keys = &keys;
                scope.spawn(move || {
                    let (mut hits, mut torn) = (0, 0);
                    let mut state = t as u64 + 1;
                    for _ in 0..rounds {
                        let r = next_key(&mut state);
                        let (store_key, probe_key) =
                            (keys[r as usize % 16], keys[(r >> 8) as usize % 16]);
                        let (mv, score, eval) = data_for(store_key);
                        store(tt, store_key, 0, mv, score, eval, 1, Bound::Exact);
                        let found = tt
                            .probe(probe_key, 0)
                            .map(|hit| (hit.mv, hit.score, hit.eval));
                        if let Some(found) = found {
                            hits += 1;
                            if found != data_for(probe_key) {
                                torn += 1;
                            }
                        }
                    }
                    (hits, torn)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    results
        .iter()
        .fold((0, 0), |acc, r| (acc.0 + r.0, acc.1 + r.1))
}

#[test]
fn torn_writes_are_never_seen_as_hits() {
    let tt = small_table(1);
    let (hits, torn) = hammer(&tt, 2_000_000);
    assert!(
        hits > 100_000,
        "the test must actually probe stored keys ({hits} hits)"
    );
    assert_eq!(torn, 0, "{torn} hits carried another key's data");
}

#[test]
fn a_torn_entry_is_never_a_hit_and_would_be_one_without_the_xor() {
    // A torn write leaves one write's key word beside another write's data word. Build such
    // pairs directly: with the XOR neither key matches; without it the first key would be
    // served the second key's data.
    let tt = small_table(TEST_BUCKETS);
    let mut state = 3;
    for _ in 0..1000 {
        let (a, b) = (next_key(&mut state), next_key(&mut state));
        let pack = |key| {
            let (mv, score, eval) = data_for(key);
            Data::pack(mv, score, eval, 1, Bound::Exact, 0)
        };
        let (data_a, data_b) = (pack(a), pack(b));
        if a ^ b == data_a.0 ^ data_b.0 {
            continue; // the one pairing the XOR cannot tell apart, at odds of 2^-64
        }
        let bucket = tt.bucket(a);
        bucket.write(0, a, data_a);
        bucket.0[1].store(data_b.0, Relaxed);
        assert_eq!(tt.probe(a, 0), None);
        assert_eq!(tt.probe(b, 0), None);
        bucket.0[0].store(a, Relaxed);
        assert_eq!(probe_plain(&tt, a), Some(data_for(b)));
        bucket.0[0].store(0, Relaxed);
        bucket.0[1].store(0, Relaxed);
    }
}

#[test]
fn hashfull_counts_only_the_current_generation() {
    let mut tt = Tt::new(1).unwrap();
    assert_eq!(tt.hashfull(), 0);
    let mut state = 7;
    // Fill the sampled buckets (the first 250 of 16384) and far beyond.
    for _ in 0..200_000 {
        store(&tt, next_key(&mut state), 0, 1, 0, 0, 1, Bound::Exact);
    }
    let full = tt.hashfull();
    assert!(full > 900 && full <= 1000, "hashfull {full}");
    tt.new_search();
    assert_eq!(tt.hashfull(), 0, "last search's entries are not counted");
}

#[test]
fn clear_and_resize_leave_an_empty_table() {
    let mut tt = Tt::new(2).unwrap();
    let mut state = 3;
    let keys: Vec<u64> = (0..100_000).map(|_| next_key(&mut state)).collect();
    for &key in &keys {
        store(&tt, key, 0, 9, 1, 2, 3, Bound::Lower);
    }
    assert!(tt.hashfull() > 500);
    assert!(keys.iter().filter(|&&k| tt.probe(k, 0).is_some()).count() > 50_000);

    tt.clear(2);
    assert_eq!(tt.hashfull(), 0);
    assert!(keys.iter().all(|&k| tt.probe(k, 0).is_none()));

    for &key in &keys {
        store(&tt, key, 0, 9, 1, 2, 3, Bound::Lower);
    }
    tt.resize(3).unwrap();
    assert_eq!(tt.mib(), 3);
    assert_eq!(tt.hashfull(), 0);
    assert!(keys.iter().all(|&k| tt.probe(k, 0).is_none()));
}

#[test]
fn failed_resize_keeps_a_usable_table_of_the_old_size() {
    let mut tt = Tt::new(2).unwrap();
    let err = tt.resize(usize::MAX >> 21).unwrap_err();
    assert!(err.to_string().contains("cannot allocate"), "{err}");
    assert_eq!(tt.mib(), 2);
    store(&tt, 42, 0, 1, 2, 3, 4, Bound::Exact);
    assert_eq!(tt.probe(42, 0).unwrap().eval, 3);
}

#[test]
fn store_reports_what_it_did() {
    let mut tt = small_table(TEST_BUCKETS);
    let keys = keys_in_one_bucket(&tt, 5);
    for &key in &keys[..4] {
        assert_eq!(
            store(&tt, key, 0, 1, 0, 0, 10, Bound::Lower),
            StoreOutcome::Empty
        );
    }
    assert_eq!(
        store(&tt, keys[0], 0, 1, 0, 0, 11, Bound::Lower),
        StoreOutcome::SameKey
    );
    assert_eq!(
        store(&tt, keys[0], 0, 1, 0, 0, 2, Bound::Upper),
        StoreOutcome::Refused
    );
    tt.new_search();
    assert_eq!(
        store(&tt, keys[4], 0, 1, 0, 0, 1, Bound::Exact),
        StoreOutcome::Replaced
    );
    let mut stats = TtStats::default();
    for outcome in [
        StoreOutcome::Empty,
        StoreOutcome::Replaced,
        StoreOutcome::Refused,
    ] {
        stats.record_store(outcome);
    }
    stats.record_probe(true);
    stats.record_probe(false);
    assert_eq!(
        (
            stats.stores,
            stats.replaced,
            stats.refused,
            stats.hits,
            stats.probes
        ),
        (3, 1, 1, 1, 2)
    );
}

#[test]
fn refine_moves_the_evaluation_only_where_the_bound_says_more() {
    let hit = |score, bound| Hit {
        mv: 0,
        score,
        eval: 0,
        depth: 5,
        bound,
    };
    // A lower bound raises a lower evaluation and leaves a higher one.
    assert_eq!(hit(120, Bound::Lower).refine(50), 120);
    assert_eq!(hit(20, Bound::Lower).refine(50), 50);
    // An upper bound lowers a higher evaluation and leaves a lower one.
    assert_eq!(hit(-30, Bound::Upper).refine(50), -30);
    assert_eq!(hit(80, Bound::Upper).refine(50), 50);
    // An exact score replaces the evaluation either way; no bound changes nothing.
    assert_eq!(hit(-200, Bound::Exact).refine(50), -200);
    assert_eq!(hit(200, Bound::None).refine(50), 50);
    // A mate score says nothing of the evaluation.
    assert_eq!(hit(MATE - 10, Bound::Lower).refine(50), 50);
    assert_eq!(hit(-MATE + 10, Bound::Exact).refine(50), 50);
}
