//! Reference counting: clones and subviews share the allocation, the last one frees it (004);
//! unmanaged views never free.

use super::*;
use std::ptr::NonNull;

#[test]
fn the_parent_allocation_lives_until_its_last_subview_goes() {
    let parent = u64_view("P", &[8, 8], Layout::Right);
    fill_with_tags(&parent);
    assert_eq!(parent.use_count(), 1);
    let row = parent.subview(&[Slice::Index(3), Slice::All]).unwrap();
    let clone = parent.clone();
    assert_eq!(parent.use_count(), 3);
    drop(parent);
    assert_eq!(row.use_count(), 2);
    drop(clone);
    assert_eq!(row.use_count(), 1);
    // The subview alone keeps the memory: reading it is valid (valgrind/ASan runs check it).
    for j in 0..8 {
        assert_eq!(get(&row, &[j]), tag(&[3, j]));
    }
}

#[test]
fn views_and_their_clones_move_between_threads() {
    let a = u64_view("T", &[1000], Layout::Right);
    let clones: Vec<View> = (0..4).map(|_| a.clone()).collect();
    assert_eq!(a.use_count(), 5);
    let handles: Vec<_> = clones
        .into_iter()
        .enumerate()
        .map(|(t, v)| {
            std::thread::spawn(move || {
                for i in (t..1000).step_by(4) {
                    set(&v, &[i], i as u64);
                }
            })
        })
        .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(a.use_count(), 1);
    assert!((0..1000).all(|i| get(&a, &[i]) == i as u64));
}

#[test]
fn unmanaged_views_use_the_callers_memory_and_never_free_it() {
    let mut buffer = vec![0u64; 12];
    let spec = ViewSpec::new("wrapped", ElementType::U64, &[3, 4]).layout(Layout::Left);
    let ptr = NonNull::new(buffer.as_mut_ptr().cast::<u8>()).unwrap();
    // SAFETY: the buffer holds the 12 elements and outlives the views.
    let view = unsafe { View::wrap(&spec, ptr) }.unwrap();
    assert!(!view.is_managed());
    assert_eq!(view.data(), ptr.as_ptr());
    set(&view, &[2, 3], 5);
    let sub = view.subview(&[Slice::All, Slice::Index(3)]).unwrap();
    assert!(!sub.is_managed());
    drop(view);
    drop(sub);
    // Column-major: (2, 3) is element 2 + 3 * 3. The buffer is still ours (freed by Vec).
    assert_eq!(buffer[11], 5);
}

#[test]
fn a_mirror_view_of_host_memory_is_the_view_itself_and_a_mirror_is_new_memory() {
    let a = View::allocate(&ViewSpec::new("A", ElementType::F64, &[3, 50]).padded()).unwrap();
    let same = a.create_mirror_view().unwrap();
    assert!(same.same_elements(&a));
    assert_eq!(a.use_count(), 2);
    let mirror = a.create_mirror().unwrap();
    assert_eq!(mirror.label(), "A_mirror");
    assert_ne!(mirror.data(), a.data());
    assert_eq!(
        (mirror.layout(), mirror.strides(), mirror.is_padded()),
        (Layout::Right, a.strides(), true)
    );
    let strided =
        View::allocate(&ViewSpec::new("S", ElementType::F64, &[3, 4]).strides(&[20, 2])).unwrap();
    let compact = strided.create_mirror().unwrap();
    assert_eq!(
        (compact.layout(), compact.strides()),
        (Layout::Stride, &[4, 1][..])
    );
}
