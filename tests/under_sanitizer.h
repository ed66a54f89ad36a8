// Whether this test binary is built with AddressSanitizer (the CI's second
// stage): its runs are ~30x slower, so the tests that loop over many seeds
// check fewer there (the runs they do check are the same, seed for seed).
#pragma once

namespace pipesim::testing_support {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif
#else
inline constexpr bool kUnderSanitizer = false;
#endif

}  // namespace pipesim::testing_support
