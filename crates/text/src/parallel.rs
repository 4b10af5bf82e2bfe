//! The one worker pool: map a slice on a few scoped threads, results in input order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The threads worth using for `jobs` independent jobs: the machine's parallelism, at most
/// `cap`, at most one per job, at least one.
pub fn threads_for(jobs: usize, cap: usize) -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(cap)
        .min(jobs)
        .max(1)
}

/// `f(i, &items[i])` for every item, on `threads` threads that each take the next unclaimed item
/// (so a slow item does not hold up a fixed share); the results come back in input order. One
/// thread runs on the caller's thread. A panic in `f` is propagated.
pub fn map_in_order<T, R, F>(items: &[T], threads: usize, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(usize, &T) -> R + Sync,
{
    if threads <= 1 || items.len() <= 1 {
        return items.iter().enumerate().map(|(i, t)| f(i, t)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        mine.push((i, f(i, item)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_input_order_whatever_the_threads() {
        let items: Vec<u64> = (0..200).collect();
        for threads in [1, 2, 7] {
            let out = map_in_order(&items, threads, |i, x| {
                // Uneven work, so threads finish out of order.
                std::thread::sleep(std::time::Duration::from_micros((x % 5) * 50));
                (i, x * x)
            });
            let want: Vec<(usize, u64)> = items.iter().map(|&x| (x as usize, x * x)).collect();
            assert_eq!(out, want, "{threads} threads");
        }
        assert!(map_in_order(&[] as &[u8], 4, |_, x| *x).is_empty());
    }

    #[test]
    fn the_thread_count_is_bounded_by_the_jobs_and_the_cap() {
        assert_eq!(threads_for(1, 8), 1);
        assert_eq!(threads_for(0, 8), 1);
        assert!(threads_for(100, 2) <= 2);
    }
}
