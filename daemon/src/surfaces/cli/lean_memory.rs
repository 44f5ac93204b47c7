//! What `vyre daemon` does so that an idle vyred holds little memory (issue 26, goal 5): glibc
//! gets as many malloc arenas as the runtime has workers, gives back what work freed once vyred
//! is quiet again, and the relocation tables the dynamic loader read once, before `main`, leave
//! the process's resident set.

/// vyred's runtime's worker threads, and so glibc's malloc arenas.
pub const WORKERS: usize = 2;

/// glibc's allocator gives a thread that meets another in malloc an arena of its own, up to
/// eight per core, and each arena keeps what was freed in it: an idle vyred held seven of them,
/// 4.6 MB. Its runtime has [`WORKERS`] workers, so as many arenas serve it: idle anonymous
/// memory 6.5 -> 5.2 MB, measured. `MALLOC_ARENA_MAX` in the environment, which glibc reads
/// itself, still decides when it is set.
pub fn fewer_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt sets one of the allocator's tunables and touches no memory of ours;
        // it runs before vyred starts a thread.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, WORKERS as libc::c_int);
        }
    }
}

/// glibc keeps what a burst of work freed (one listing of every tool's schemas is a few MB of
/// heap) in its arenas, in pages it hands back only when the top of the main heap is free: an
/// idle vyred's own memory was 3.5 MB fresh and 7.4 after two CLI calls. `malloc_trim` gives
/// every arena's free whole pages back; vyred calls it once it is quiet after work
/// (`surfaces::api::quiet`), never on a timer.
pub fn give_back_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases pages the allocator holds free; it takes the arenas'
    // locks like any allocation does.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The dynamic loader applies the program's relocations before `main` and never reads them
/// again (vyre links with `-z now`, so none wait for a first call): ~850 kB of `.rela.dyn`
/// that a start leaves resident. They are dropped from this process's mappings with
/// `MADV_DONTNEED`, which for a file's pages that were never written only unmaps them: the
/// file and the page cache keep them, and a read would map them again, unchanged. Only whole
/// pages inside a read-only segment are dropped, never one that holds anything else or that
/// the loader wrote (`PT_GNU_RELRO`). Returns the bytes dropped.
pub fn drop_relocations() -> usize {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    {
        let Some(image) = elf::Image::of_program() else {
            return 0;
        };
        let page = page_size();
        let mut dropped = 0;
        for range in image.relocation_pages(page) {
            // SAFETY: `range` is whole pages of a read-only, never-written mapping of the
            // program's file (checked by `relocation_pages`); dropping them changes no byte a
            // later read sees.
            let done = unsafe {
                libc::madvise(
                    range.start as *mut libc::c_void,
                    range.end - range.start,
                    libc::MADV_DONTNEED,
                )
            };
            if done == 0 {
                dropped += range.end - range.start;
            }
        }
        dropped
    }
    #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
    0
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod elf {
    use std::ops::Range;

    use libc::{PF_W, PT_DYNAMIC, PT_GNU_RELRO, PT_LOAD};

    // The dynamic section's tags, which libc does not name.
    const DT_NULL: i64 = 0;
    const DT_PLTRELSZ: i64 = 2;
    const DT_RELA: i64 = 7;
    const DT_RELASZ: i64 = 8;
    const DT_TEXTREL: i64 = 22;
    const DT_JMPREL: i64 = 23;
    const DT_FLAGS: i64 = 30;
    const DF_TEXTREL: usize = 4;

    /// A segment of the program as loaded: its addresses in this process.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Segment {
        pub kind: u32,
        pub flags: u32,
        pub at: Range<usize>,
    }

    /// What of the program's ELF image the relocations' place needs.
    #[derive(Debug, Default)]
    pub struct Image {
        pub segments: Vec<Segment>,
        /// The relocation tables, as addresses in this process.
        pub tables: Vec<Range<usize>>,
    }

    impl Image {
        /// The running program's, from the loader's own list (its first entry is the program).
        pub fn of_program() -> Option<Image> {
            let mut image: Option<Image> = None;
            // SAFETY: the callback reads the loader's description of the first object only,
            // while dl_iterate_phdr holds it still; it writes only to `image`.
            unsafe {
                libc::dl_iterate_phdr(
                    Some(first_object),
                    (&mut image as *mut Option<Image>).cast::<libc::c_void>(),
                );
            }
            image
        }

        /// The whole pages of the relocation tables that lie in a read-only segment the
        /// loader did not write to.
        pub fn relocation_pages(&self, page: usize) -> Vec<Range<usize>> {
            let read_only = |r: &Range<usize>| {
                self.segments.iter().any(|s| {
                    s.kind == PT_LOAD
                        && s.flags & PF_W == 0
                        && s.at.start <= r.start
                        && r.end <= s.at.end
                }) && !self
                    .segments
                    .iter()
                    .any(|s| s.kind == PT_GNU_RELRO && s.at.start < r.end && r.start < s.at.end)
            };
            self.tables
                .iter()
                .filter(|t| read_only(t))
                .filter_map(|t| {
                    let start = t.start.checked_next_multiple_of(page)?;
                    let end = t.end - t.end % page;
                    (start < end).then_some(start..end)
                })
                .collect()
        }
    }

    /// `dl_iterate_phdr`'s callback: describes the first object and stops the walk.
    unsafe extern "C" fn first_object(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid description, and `data` is the `Option<Image>`
        // that `of_program` lent.
        unsafe {
            let info = &*info;
            let out = &mut *data.cast::<Option<Image>>();
            let bias = info.dlpi_addr as usize;
            let headers = std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum));
            let segments: Vec<Segment> = headers
                .iter()
                .map(|h| Segment {
                    kind: h.p_type,
                    flags: h.p_flags,
                    at: bias + h.p_vaddr as usize..bias + (h.p_vaddr + h.p_memsz) as usize,
                })
                .collect();
            let mut entries = Vec::new();
            if let Some(dynamic) = segments.iter().find(|s| s.kind == PT_DYNAMIC) {
                let count = (dynamic.at.end - dynamic.at.start) / 16;
                let first = dynamic.at.start as *const [u64; 2];
                for i in 0..count {
                    let [tag, value] = *first.add(i);
                    if tag as i64 == DT_NULL {
                        break;
                    }
                    entries.push((tag as i64, value as usize));
                }
            }
            *out = Some(Image {
                tables: tables(&entries, bias),
                segments,
            });
        }
        1
    }

    /// The relocation tables named by the dynamic section's entries. glibc turns their
    /// addresses into this process's in place where the section is writable (x86_64, arm64)
    /// and leaves them as linked elsewhere, so an address below the load bias is still the
    /// file's.
    pub fn tables(entries: &[(i64, usize)], bias: usize) -> Vec<Range<usize>> {
        let value = |tag: i64| entries.iter().find(|(t, _)| *t == tag).map(|(_, v)| *v);
        // Relocations in the code make the loader write to read-only pages: none are dropped.
        if value(DT_TEXTREL).is_some() || value(DT_FLAGS).is_some_and(|f| f & DF_TEXTREL != 0) {
            return Vec::new();
        }
        let placed = |at: usize| if at < bias { at + bias } else { at };
        [(DT_RELA, DT_RELASZ), (DT_JMPREL, DT_PLTRELSZ)]
            .into_iter()
            .filter_map(|(at, size)| {
                let start = placed(value(at)?);
                Some(start..start + value(size)?)
            })
            .filter(|r| r.start < r.end)
            .collect()
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn load(flags: u32, at: Range<usize>) -> Segment {
            Segment {
                kind: PT_LOAD,
                flags,
                at,
            }
        }

        #[test]
        fn drops_only_whole_pages_of_a_read_only_segment() {
            let image = Image {
                segments: vec![
                    load(4, 0x1000..0x9000),
                    load(5, 0x9000..0x20000),
                    load(6, 0x20000..0x30000),
                    Segment {
                        kind: PT_GNU_RELRO,
                        flags: 4,
                        at: 0x20000..0x24000,
                    },
                ],
                tables: vec![
                    // Pages 0x2000..0x7000 wholly the table's; the edges hold other data.
                    0x1800..0x7100,
                    // Within one page: nothing whole to drop.
                    0x8100..0x8f00,
                    // In a writable segment: never.
                    0x21000..0x23000,
                    // Crossing out of its segment: never.
                    0x8000..0xa000,
                ],
            };
            assert_eq!(image.relocation_pages(0x1000), vec![0x2000..0x7000]);
        }

        #[test]
        fn reads_the_tables_as_linked_or_as_placed() {
            let bias = 0x5555_0000_0000;
            let linked = [
                (DT_RELA, 0x1000),
                (DT_RELASZ, 0x300),
                (DT_JMPREL, 0x1400),
                (DT_PLTRELSZ, 0x30),
            ];
            assert_eq!(
                tables(&linked, bias),
                vec![bias + 0x1000..bias + 0x1300, bias + 0x1400..bias + 0x1430]
            );
            let placed = [(DT_RELA, bias + 0x1000), (DT_RELASZ, 0x300)];
            assert_eq!(tables(&placed, bias), vec![bias + 0x1000..bias + 0x1300]);
            // A table without its size, or empty, is none.
            assert!(tables(&[(DT_RELA, 0x1000)], bias).is_empty());
            assert!(tables(&[(DT_RELA, 0x1000), (DT_RELASZ, 0)], bias).is_empty());
            // A program whose code the loader wrote to keeps every page.
            let written = [(DT_RELA, 0x1000), (DT_RELASZ, 0x300), (DT_TEXTREL, 0)];
            assert!(tables(&written, bias).is_empty());
            let flagged = [
                (DT_RELA, 0x1000),
                (DT_RELASZ, 0x300),
                (DT_FLAGS, DF_TEXTREL),
            ];
            assert!(tables(&flagged, bias).is_empty());
        }

        #[test]
        fn finds_this_programs_tables_in_its_read_only_mapping() {
            let image = Image::of_program().expect("the program's image");
            assert!(
                image.segments.iter().any(|s| s.kind == PT_LOAD),
                "{image:?}"
            );
            let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
            let exe = std::fs::read_link("/proc/self/exe").unwrap();
            for table in &image.tables {
                // Each table lies in a mapping of this program's file.
                let inside = maps.lines().any(|l| {
                    let (range, rest) = l.split_once(' ').unwrap();
                    let (a, b) = range.split_once('-').unwrap();
                    let (a, b) = (
                        usize::from_str_radix(a, 16).unwrap(),
                        usize::from_str_radix(b, 16).unwrap(),
                    );
                    rest.ends_with(&*exe.to_string_lossy()) && a <= table.start && table.end <= b
                });
                assert!(inside, "{table:x?} not in a mapping of {exe:?}:\n{maps}");
            }
        }
    }
}

#[cfg(all(test, target_os = "linux", target_pointer_width = "64"))]
mod tests {
    use super::*;

    /// Dropped pages read back as they were: the file's bytes, not zeros.
    #[test]
    fn dropped_relocations_read_back_unchanged() {
        let image = elf::Image::of_program().expect("the program's image");
        let pages = image.relocation_pages(page_size());
        // SAFETY: the ranges are mapped pages of this program's file (the loader's own list).
        let read = || -> Vec<Vec<u8>> {
            pages
                .iter()
                .map(|r| unsafe {
                    std::slice::from_raw_parts(r.start as *const u8, r.end - r.start).to_vec()
                })
                .collect()
        };
        // A test binary is position-independent: it has relocations, most of them whole pages.
        assert!(!pages.is_empty(), "{image:?}");
        let before = read();
        let dropped = drop_relocations();
        assert_eq!(
            dropped,
            pages.iter().map(|r| r.end - r.start).sum::<usize>()
        );
        assert_eq!(read(), before);
        assert!(before.iter().flatten().any(|b| *b != 0));
    }
}
