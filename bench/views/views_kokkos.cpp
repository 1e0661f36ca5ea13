// Views benchmark, Kokkos peer: Kokkos::View<double**|***, Layout, HostSpace> source and
// destination, Kokkos::deep_copy(dst, src). One thread only: the Debian/Trilinos Kokkos build
// has the Serial back-end alone, where a copy between layouts is one element loop.
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <string>

#define IMPL_NAME "kokkos"
#define IMPL_MAX_THREADS 1
#include "views_driver.h"

namespace {

using left2 = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
using right2 = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
using left3 = Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace>;
using right3 = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace>;

// The views of the run; only the pair of the benchmark's rank and layouts is allocated.
struct arrays {
    left2 l2[2];
    right2 r2[2];
    left3 l3[2];
    right3 r3[2];
};
arrays* g_arrays;

// Allocates array `which` (0 = source, 1 = destination) in `layout`.
void allocate(const views_params* p, int which, int layout) {
    const std::string label = which == 0 ? "src" : "dst";
    const size_t* e = p->extents;
    if (p->rank == 2 && layout == VIEWS_LEFT) g_arrays->l2[which] = left2(label, e[0], e[1]);
    if (p->rank == 2 && layout == VIEWS_RIGHT) g_arrays->r2[which] = right2(label, e[0], e[1]);
    if (p->rank == 3 && layout == VIEWS_LEFT) g_arrays->l3[which] = left3(label, e[0], e[1], e[2]);
    if (p->rank == 3 && layout == VIEWS_RIGHT) g_arrays->r3[which] = right3(label, e[0], e[1], e[2]);
}

double* element(int which, int layout, const size_t* i) {
    if (g_params.rank == 2)
        return layout == VIEWS_LEFT ? &g_arrays->l2[which](i[0], i[1]) : &g_arrays->r2[which](i[0], i[1]);
    return layout == VIEWS_LEFT ? &g_arrays->l3[which](i[0], i[1], i[2]) : &g_arrays->r3[which](i[0], i[1], i[2]);
}

template <class D, class S>
void copy(const D& dst, const S& src) {
    Kokkos::deep_copy(dst, src);
}

}  // namespace

static int impl_setup(const views_params* p, char* err, size_t n) {
    Kokkos::InitArguments args;  // not argv: our --threads must not reach Kokkos
    args.num_threads = 1;
    Kokkos::initialize(args);
    try {
        g_arrays = new arrays();
        allocate(p, 0, p->src_layout);
        allocate(p, 1, p->dst_layout);
    } catch (std::exception& e) {
        std::snprintf(err, n, "Kokkos::View allocation: %s", e.what());
        return 1;
    }
    return 0;
}

static double* impl_src(const size_t* index) { return element(0, g_params.src_layout, index); }
static double* impl_dst(const size_t* index) { return element(1, g_params.dst_layout, index); }

static int impl_copy(char* err, size_t n) {
    const arrays& a = *g_arrays;
    const bool src_left = g_params.src_layout == VIEWS_LEFT, dst_left = g_params.dst_layout == VIEWS_LEFT;
    try {
        if (g_params.rank == 2) {
            if (dst_left)
                src_left ? copy(a.l2[1], a.l2[0]) : copy(a.l2[1], a.r2[0]);
            else
                src_left ? copy(a.r2[1], a.l2[0]) : copy(a.r2[1], a.r2[0]);
        } else {
            if (dst_left)
                src_left ? copy(a.l3[1], a.l3[0]) : copy(a.l3[1], a.r3[0]);
            else
                src_left ? copy(a.r3[1], a.l3[0]) : copy(a.r3[1], a.r3[0]);
        }
    } catch (std::exception& e) {
        std::snprintf(err, n, "Kokkos::deep_copy: %s", e.what());
        return 1;
    }
    return 0;
}

static void impl_info(FILE* f) {
    std::fprintf(f, ",\"version\":\"Kokkos %d.%d.%d\"", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100,
                 KOKKOS_VERSION % 100);
}

static void impl_teardown(void) {
    delete g_arrays;
    Kokkos::finalize();
}
