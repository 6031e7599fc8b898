import Crypto
import Foundation
import NIOSSL
import X509

/// A certificate authority made by the test, and a server certificate for `localhost` it
/// signed: what a test's HTTPS server presents and what its client is told to trust.
public struct TestCertificateAuthority: Sendable {
    /// The authority's certificate, PEM.
    public let certificatePEM: String
    /// The server's certificate (for `localhost`) and key, PEM.
    public let serverCertificatePEM: String
    public let serverKeyPEM: String

    public init() throws {
        let now = Date()
        let authorityKey = P256.Signing.PrivateKey()
        let authorityName = try DistinguishedName { CommonName("Parley test CA \(UUID().uuidString.prefix(8))") }
        let authority = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PrivateKey(authorityKey).publicKey, notValidBefore: now - 3600,
            notValidAfter: now + 86_400, issuer: authorityName, subject: authorityName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(authorityKey))
        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PrivateKey(serverKey).publicKey, notValidBefore: now - 3600,
            notValidAfter: now + 86_400, issuer: authorityName,
            subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost")])
            },
            issuerPrivateKey: Certificate.PrivateKey(authorityKey))
        certificatePEM = try authority.serializeAsPEM().pemString
        serverCertificatePEM = try server.serializeAsPEM().pemString
        serverKeyPEM = serverKey.pemRepresentation
    }

    /// Writes the authority's certificate to a new file (for a setting such as
    /// `PARLEY_AUTH_CA_FILE`) and returns its path.
    public func writeCertificate() throws -> String {
        let path = TestScratch.path("test-ca", suffix: ".pem")
        try Data(certificatePEM.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A TLS server configuration presenting the server certificate.
    public func serverTLS() throws -> TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(
            certificateChain: [
                .certificate(try NIOSSLCertificate(bytes: Array(serverCertificatePEM.utf8), format: .pem))
            ],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(serverKeyPEM.utf8), format: .pem)))
    }
}
