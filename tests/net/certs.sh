#!/usr/bin/env bash
# tests/net/certs.sh DIR - make the TLS material of one test in DIR (openssl):
#   ca.pem                      the test's CA (what -o cafile= is given)
#   server.pem server.key       a server certificate signed by ca.pem, valid for
#                               127.0.0.1, ::1 and localhost
#   other-ca.pem                an unrelated CA
#   other.pem other.key         a certificate for the same names signed by
#                               other-ca.pem (a client trusting ca.pem must
#                               reject it)
# EC P-256 keys, one day of validity; nothing outside DIR is touched.
set -euo pipefail
dir=${1:?usage: certs.sh DIR}
mkdir -p "$dir"
cd "$dir"

# ca NAME: a self-signed CA NAME.pem / NAME.key
ca() {
    openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
        -keyout "$1.key" -out "$1.pem" -days 1 -subj "/CN=zarrfs test $1" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
        2>/dev/null
}

# leaf NAME CA: NAME.pem / NAME.key for 127.0.0.1, ::1, localhost signed by CA
leaf() {
    openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
        -keyout "$1.key" -out "$1.csr" -subj "/CN=localhost" 2>/dev/null
    printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=critical,digitalSignature' \
        'extendedKeyUsage=serverAuth' 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost' >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial \
        -out "$1.pem" -days 1 -extfile "$1.ext" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}

ca ca
leaf server ca
ca other-ca
leaf other other-ca
chmod 600 ./*.key
