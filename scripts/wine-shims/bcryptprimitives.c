/* ProcessPrng, the one export of Windows 10's bcryptprimitives.dll that Rust's standard library
 * imports (its random source since Rust 1.78), on BCryptGenRandom: wine 8.0 has no
 * bcryptprimitives.dll. For the wine test harness only (scripts/windows-python); never shipped. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
