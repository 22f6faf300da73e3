#include "pam_table.h"

#include <mimo_gpu/constellation.h>

namespace mimo_gpu {
namespace detail {

pam_table make_pam_table(const constellation& c)
{
    pam_table t{};
    t.levels = c.pam_levels();
    t.bits_per_dim = c.bits_per_dimension();
    t.scale = c.scale();
    t.inv_scale = 1.0f / c.scale();
    for (int i = 0; i < t.levels; ++i)
        t.label[i] = uint16_t(c.pam_label(i));
    return t;
}

} // namespace detail
} // namespace mimo_gpu
