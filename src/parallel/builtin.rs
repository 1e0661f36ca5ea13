//! Built-in reductions: sum, min, max and product over int32, int64, float and double.

/// A built-in reduction operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Min,
    Max,
    Prod,
}

/// The element type of a built-in reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarType {
    I32,
    I64,
    F32,
    F64,
}

macro_rules! by_type {
    ($ty:expr, $t:ident => $body:expr) => {
        match $ty {
            ScalarType::I32 => {
                type $t = i32;
                $body
            }
            ScalarType::I64 => {
                type $t = i64;
                $body
            }
            ScalarType::F32 => {
                type $t = f32;
                $body
            }
            ScalarType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

trait Scalar: Copy + PartialOrd {
    /// True for a NaN (never for integers).
    fn is_nan(self) -> bool;
    const ZERO: Self;
    const ONE: Self;
    const MIN: Self;
    const MAX: Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
}

macro_rules! int_scalar {
    ($t:ty) => {
        impl Scalar for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            fn is_nan(self) -> bool {
                false
            }
            // Integer overflow wraps, as the same loop would in C.
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
        }
    };
}
macro_rules! float_scalar {
    ($t:ty) => {
        impl Scalar for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const MIN: Self = <$t>::NEG_INFINITY;
            const MAX: Self = <$t>::INFINITY;
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
        }
    };
}
int_scalar!(i32);
int_scalar!(i64);
float_scalar!(f32);
float_scalar!(f64);

fn read<T: Copy>(b: &[u8]) -> T {
    // SAFETY: callers pass slices of `size_of::<T>()` bytes; unaligned reads are allowed.
    unsafe { (b.as_ptr() as *const T).read_unaligned() }
}

fn write<T: Copy>(b: &mut [u8], v: T) {
    // SAFETY: as in `read`.
    unsafe { (b.as_mut_ptr() as *mut T).write_unaligned(v) }
}

fn identity_of<T: Scalar>(op: ReduceOp) -> T {
    match op {
        ReduceOp::Sum => T::ZERO,
        ReduceOp::Prod => T::ONE,
        ReduceOp::Min => T::MAX,
        ReduceOp::Max => T::MIN,
    }
}

fn join_of<T: Scalar>(op: ReduceOp, a: T, b: T) -> T {
    match op {
        ReduceOp::Sum => a.add(b),
        ReduceOp::Prod => a.mul(b),
        // NaN is ignored by min and max unless both are NaN, as fmin/fmax do.
        ReduceOp::Min => {
            if b < a || a.is_nan() {
                b
            } else {
                a
            }
        }
        ReduceOp::Max => {
            if b > a || a.is_nan() {
                b
            } else {
                a
            }
        }
    }
}

impl ScalarType {
    pub fn size(self) -> usize {
        by_type!(self, T => std::mem::size_of::<T>())
    }

    /// Writes the identity of `op` (0, 1, the largest or the smallest value) into `out`.
    pub fn identity(self, op: ReduceOp, out: &mut [u8]) {
        by_type!(self, T => write::<T>(out, identity_of::<T>(op)))
    }

    /// dst = dst ⊕ src.
    pub fn join(self, op: ReduceOp, dst: &mut [u8], src: &[u8]) {
        by_type!(self, T => {
            let v = join_of::<T>(op, read::<T>(dst), read::<T>(src));
            write::<T>(dst, v)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_and_joins_follow_each_operator() {
        let mut v = [0u8; 8];
        ScalarType::I64.identity(ReduceOp::Min, &mut v);
        assert_eq!(i64::from_ne_bytes(v), i64::MAX);
        ScalarType::I64.join(ReduceOp::Min, &mut v, &(-3i64).to_ne_bytes());
        assert_eq!(i64::from_ne_bytes(v), -3);
        let mut f = [0u8; 4];
        ScalarType::F32.identity(ReduceOp::Prod, &mut f);
        ScalarType::F32.join(ReduceOp::Prod, &mut f, &2.5f32.to_ne_bytes());
        assert_eq!(f32::from_ne_bytes(f), 2.5);
        let mut d = [0u8; 8];
        ScalarType::F64.identity(ReduceOp::Max, &mut d);
        ScalarType::F64.join(ReduceOp::Max, &mut d, &f64::NAN.to_ne_bytes());
        ScalarType::F64.join(ReduceOp::Max, &mut d, &1.0f64.to_ne_bytes());
        assert_eq!(f64::from_ne_bytes(d), 1.0);
        assert_eq!(ScalarType::I32.size(), 4);
    }
}
