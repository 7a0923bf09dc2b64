//! The one work pool of the laboratory: many runs at once, results in order. Bearer
//! runs, device runs, loss curves and instruction counts each hand their jobs to it;
//! most of a bearer run is waiting on the emulated link, so dozens share two cores
//! without disturbing each other's timing.

use std::sync::Mutex;

/// Runs `work` items through `run`, `parallelism` at a time; results in `work`'s order.
pub fn run_concurrently<J: Sync, T: Send>(
    work: &[J],
    parallelism: usize,
    run: impl Fn(usize, &J) -> T + Sync,
) -> Vec<T> {
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..work.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..parallelism.clamp(1, work.len().max(1)) {
            s.spawn(|| loop {
                let i = {
                    let mut g = next.lock().unwrap_or_else(|e| e.into_inner());
                    let i = *g;
                    *g += 1;
                    i
                };
                let Some(job) = work.get(i) else { break };
                let r = run(i, job);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order() {
        let out = run_concurrently(&[3, 1, 2], 2, |i, x| i * 10 + x);
        assert_eq!(out, vec![3, 11, 22]);
    }
}
