/* Mbed TLS 2.28 configuration of the executed-cost firmware: the client's public-key
 * primitives (prime-curve ECDH/ECDSA, RSA) and the CTR_DRBG that feeds them, with the
 * library's default speed options (assembler multiply-accumulate, NIST fast reduction,
 * fixed-point comb, window size 4) and nothing else. */
#ifndef ISA_MBEDTLS_CONFIG_H
#define ISA_MBEDTLS_CONFIG_H

#define MBEDTLS_HAVE_ASM
#define MBEDTLS_NO_PLATFORM_ENTROPY

#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP192R1_ENABLED
#define MBEDTLS_ECP_DP_SECP224R1_ENABLED
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_OID_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_AES_C
#define MBEDTLS_CTR_DRBG_C

#include "mbedtls/check_config.h"
#endif
