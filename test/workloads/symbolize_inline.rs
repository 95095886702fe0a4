// The Rust workload of the symbolizer tests (symbolize_addr2line_test.cpp): an always-inlined
// helper in a never-inlined function, and a generic function instantiated twice.

#[inline(always)]
fn inner(x: f64, g: f64) -> f64 {
    let mut x = x;
    for _ in 0..200 {
        x = x * g + 0.5;
    }
    x
}

#[inline(never)]
fn outer(n: u32, g: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        s += inner(i as f64, g);
    }
    s
}

#[inline(never)]
fn sum_of<T: Copy + Into<f64>>(values: &[T]) -> f64 {
    values.iter().map(|v| (*v).into()).sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // From the command line, so that the optimizer cannot fold the loops away.
    let g = 1.0 + args.len() as f64 * 1e-7;
    let rounds: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(300);
    let mut t = 0.0;
    for _ in 0..rounds {
        t += outer(20000 + args.len() as u32, g);
    }
    let small: Vec<u8> = (0..100).collect();
    let wide: Vec<u32> = (0..100).collect();
    t += sum_of(&small) + sum_of(&wide);
    println!("{}", t > 0.0);
}
