//! `transpose_crs` (000 §3.3.1): the graph with every edge reversed.
//!
//! Algorithms often know, for each item, the items it waits for ("j after these i"); the work
//! graph needs the opposite rows ("these j after i"). The transpose converts one into the other
//! in O(N + NZ) by a counting sort on the column index, which keeps each new row in ascending
//! order of the old rows, so transposing twice restores the original up to the order inside each
//! row (exactly the original when its rows were sorted).

use super::crs::Crs;

impl Crs {
    /// The transpose: `i` is in row `j` of the result for each `j` in row `i` of `self`.
    pub fn transpose(&self) -> Crs {
        let n = self.num_rows();
        // Count each column, then turn the counts into row starts (an exclusive prefix sum).
        let mut row_map = vec![0u32; n + 1];
        for &j in self.entries() {
            row_map[j as usize + 1] += 1;
        }
        for i in 0..n {
            row_map[i + 1] += row_map[i];
        }
        // Fill each new row from its start, visiting old rows in order.
        let mut fill = row_map[..n].to_vec();
        let mut entries = vec![0u32; self.num_entries()];
        for i in 0..n {
            for &j in self.row(i) {
                let slot = &mut fill[j as usize];
                entries[*slot as usize] = i as u32;
                *slot += 1;
            }
        }
        Crs::from_valid_parts(row_map, entries)
    }
}
