//! [`Records`]: a PIT entry's in- or out-records, one inline and more on the heap, in as many
//! bytes as the record itself.

/// No record, one record inline (the usual case: one downstream, and best-route forwards to
/// one upstream), or several on the heap. `T` must have a niche (each record has a `bool`) so
/// that the three cases need no tag: 40 bytes for a 40-byte record, where `SmallVec<[T; 1]>`
/// takes 48.
#[derive(Clone, Debug, Default)]
pub(super) enum Records<T> {
    #[default]
    Empty,
    One(T),
    Many(Vec<T>),
}

impl<T> Records<T> {
    /// The records, in insertion order.
    #[inline]
    pub(super) fn as_slice(&self) -> &[T] {
        match self {
            Self::Empty => &[],
            Self::One(r) => core::slice::from_ref(r),
            Self::Many(v) => v,
        }
    }

    /// The records, in insertion order.
    #[inline]
    pub(super) fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Self::Empty => &mut [],
            Self::One(r) => core::slice::from_mut(r),
            Self::Many(v) => v,
        }
    }

    /// Appends `r`.
    #[inline]
    pub(super) fn push(&mut self, r: T) {
        if let Self::Empty = self {
            *self = Self::One(r);
            return;
        }
        *self = match core::mem::take(self) {
            Self::Empty => Self::One(r),
            Self::One(first) => Self::Many(vec![first, r]),
            Self::Many(mut v) => {
                v.push(r);
                Self::Many(v)
            }
        };
    }

    /// Drops the record at `i` where it is (the usual case, the only record, is not moved
    /// out first), keeping the order of the others; false if there is none.
    #[inline]
    pub(super) fn delete(&mut self, i: usize) -> bool {
        match self {
            Self::One(_) if i == 0 => {
                *self = Self::Empty;
                true
            }
            _ => self.remove(i).is_some(),
        }
    }

    /// Removes and returns the record at `i`, keeping the order of the others. One record
    /// left goes back inline (the heap block is freed).
    pub(super) fn remove(&mut self, i: usize) -> Option<T> {
        match self {
            Self::Empty => None,
            Self::One(_) if i != 0 => None,
            Self::One(_) => match core::mem::take(self) {
                Self::One(r) => Some(r),
                _ => None,
            },
            Self::Many(v) if i < v.len() => {
                let r = v.remove(i);
                if v.len() <= 1 {
                    *self = v.pop().map_or(Self::Empty, Self::One);
                }
                Some(r)
            }
            Self::Many(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record with a niche, as an out-record has.
    #[derive(Clone, Debug, PartialEq)]
    struct R(u64, u64, u64, u64, u32, bool);

    #[test]
    fn as_large_as_one_record() {
        assert_eq!(
            core::mem::size_of::<Records<R>>(),
            core::mem::size_of::<R>()
        );
    }

    #[test]
    fn keeps_insertion_order_through_pushes_and_removals() {
        let r = |n| R(n, 0, 0, 0, 0, false);
        let mut rs = Records::default();
        assert!(rs.as_slice().is_empty());
        assert_eq!(rs.remove(0), None);
        rs.push(r(1));
        assert_eq!(rs.as_slice(), [r(1)]);
        assert_eq!(rs.remove(1), None);
        rs.push(r(2));
        rs.push(r(3));
        assert_eq!(rs.as_slice(), [r(1), r(2), r(3)]);
        assert_eq!(rs.remove(1), Some(r(2)));
        assert_eq!(rs.as_slice(), [r(1), r(3)]);
        assert!(matches!(rs, Records::Many(_)));
        rs.as_mut_slice()[0].5 = true;
        assert!(rs.as_slice()[0].5);
        assert_eq!(rs.remove(5), None);
        assert_eq!(rs.remove(0).map(|x| x.0), Some(1));
        assert!(matches!(rs, Records::One(_)), "back inline");
        assert_eq!(rs.remove(0), Some(r(3)));
        assert!(rs.as_slice().is_empty());
        rs.push(r(4));
        assert_eq!(rs.remove(0), Some(r(4)));
        assert!(matches!(rs, Records::Empty));
        for n in [1, 2, 3] {
            rs.push(r(n));
        }
        assert!(rs.delete(1) && !rs.delete(2));
        assert_eq!(rs.as_slice(), [r(1), r(3)]);
        assert!(rs.delete(1) && rs.delete(0) && !rs.delete(0));
        assert!(matches!(rs, Records::Empty));
    }
}
