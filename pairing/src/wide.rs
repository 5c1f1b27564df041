//! A fixed-width two's-complement integer of `64 * L` bits. The Dutch system's edge weights pack
//! every pairing criterion into one number (a field of bits per criterion, the most important
//! highest), which for a large event needs hundreds of bits; the matching adds and compares
//! such numbers and nothing else.

use std::cmp::Ordering;
use std::ops::{Add, Sub};

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Wide<const L: usize>(pub [u64; L]);

impl<const L: usize> Wide<L> {
    pub const ZERO: Self = Wide([0; L]);

    pub fn from_u64(v: u64) -> Self {
        let mut w = Self::ZERO;
        w.0[0] = v;
        w
    }

    /// `a + b - c` in one pass (the matching's slack, its hottest sum).
    #[inline(always)]
    pub fn add_sub(a: &Self, b: &Self, c: &Self) -> Self {
        let mut out = [0u64; L];
        let mut carry = 0u64;
        let mut borrow = 0u64;
        for (i, out) in out.iter_mut().enumerate() {
            let (s, c1) = a.0[i].overflowing_add(b.0[i]);
            let (s, c2) = s.overflowing_add(carry);
            carry = (c1 | c2) as u64;
            let (d, b1) = s.overflowing_sub(c.0[i]);
            let (d, b2) = d.overflowing_sub(borrow);
            borrow = (b1 | b2) as u64;
            *out = d;
        }
        Wide(out)
    }

    /// Whether the value is zero or negative.
    #[inline(always)]
    pub fn not_positive(&self) -> bool {
        self.negative() || self.0.iter().all(|&l| l == 0)
    }

    #[inline(always)]
    fn negative(&self) -> bool {
        self.0[L - 1] >> 63 == 1
    }

    /// Shifts left by `bits` (bits shifted out of the top are lost).
    pub fn shl(&mut self, bits: u32) {
        if bits == 0 {
            return;
        }
        let limbs = (bits / 64) as usize;
        let rest = bits % 64;
        let mut out = [0u64; L];
        for i in (0..L).rev() {
            if i < limbs {
                break;
            }
            let src = i - limbs;
            let mut v = self.0[src] << rest;
            if rest > 0 && src > 0 {
                v |= self.0[src - 1] >> (64 - rest);
            }
            out[i] = v;
        }
        self.0 = out;
    }

    /// Adds `v << bits` (bits beyond the top are lost).
    pub fn add_shifted(&mut self, v: u64, bits: u32) {
        let limb = (bits / 64) as usize;
        let off = bits % 64;
        if v == 0 || limb >= L {
            return;
        }
        let low = v << off;
        let high = if off == 0 { 0 } else { v >> (64 - off) };
        let (s, c) = self.0[limb].overflowing_add(low);
        self.0[limb] = s;
        let mut carry = high + c as u64;
        let mut i = limb + 1;
        while carry != 0 && i < L {
            let (s, c) = self.0[i].overflowing_add(carry);
            self.0[i] = s;
            carry = c as u64;
            i += 1;
        }
    }

    /// Halves, rounding towards minus infinity.
    pub fn half(self) -> Self {
        let mut out = [0u64; L];
        for (i, o) in out.iter_mut().enumerate() {
            let high = if i + 1 < L {
                self.0[i + 1] << 63
            } else if self.negative() {
                1 << 63
            } else {
                0
            };
            *o = (self.0[i] >> 1) | high;
        }
        Wide(out)
    }
}

impl<const L: usize> Add for Wide<L> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        let mut out = [0u64; L];
        let mut carry = false;
        for (i, out) in out.iter_mut().enumerate() {
            let (s, c1) = self.0[i].overflowing_add(o.0[i]);
            let (s, c2) = s.overflowing_add(carry as u64);
            *out = s;
            carry = c1 || c2;
        }
        Wide(out)
    }
}

impl<const L: usize> Sub for Wide<L> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        let mut out = [0u64; L];
        let mut borrow = false;
        for (i, out) in out.iter_mut().enumerate() {
            let (s, b1) = self.0[i].overflowing_sub(o.0[i]);
            let (s, b2) = s.overflowing_sub(borrow as u64);
            *out = s;
            borrow = b1 || b2;
        }
        Wide(out)
    }
}

impl<const L: usize> Ord for Wide<L> {
    #[inline(always)]
    fn cmp(&self, o: &Self) -> Ordering {
        match (self.negative(), o.negative()) {
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        for i in (0..L).rev() {
            match self.0[i].cmp(&o.0[i]) {
                Ordering::Equal => continue,
                other => return other,
            }
        }
        Ordering::Equal
    }
}

impl<const L: usize> PartialOrd for Wide<L> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl<const L: usize> std::fmt::Debug for Wide<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "0x")?;
        for l in self.0.iter().rev() {
            write!(f, "{l:016x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type W = Wide<2>;

    #[test]
    fn carries_borrows_and_signed_order() {
        let a = W::from_u64(u64::MAX);
        let b = a + W::from_u64(1);
        assert_eq!(b.0, [0, 1]);
        assert_eq!(b - W::from_u64(1), a);
        let minus_one = W::ZERO - W::from_u64(1);
        assert!(minus_one < W::ZERO);
        assert!(minus_one < a);
        assert_eq!(minus_one.half(), minus_one);
        assert_eq!(W::from_u64(6).half(), W::from_u64(3));
        assert_eq!(b.half(), W::from_u64(1 << 63));
        assert_eq!(W::add_sub(&a, &W::from_u64(2), &b), W::from_u64(1));
        assert!(W::add_sub(&W::ZERO, &W::ZERO, &a).not_positive());
        assert!(W::ZERO.not_positive());
        assert!(!W::from_u64(1).not_positive());
    }

    #[test]
    fn shifts_across_limbs() {
        let mut a = W::from_u64(0b101);
        a.shl(62);
        assert_eq!(a.0, [1 << 62, 0b1]);
        a.shl(64);
        assert_eq!(a.0, [0, 1 << 62]);
        let mut c = W::ZERO;
        c.add_shifted(3, 70);
        assert_eq!(c.0, [0, 3 << 6]);
        let mut d = W::from_u64(u64::MAX);
        d.add_shifted(0b11, 63);
        assert_eq!(d.0, [(1 << 63) - 1, 0b10]);
    }
}
