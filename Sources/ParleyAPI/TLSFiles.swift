import Foundation
import NIOSSL

/// The TLS listener's certificate and key, checked as the listener would load them.
public enum TLSFiles {
    public struct Report: Sendable {
        /// The end of the leaf certificate's validity.
        public let expiresAt: Date
    }

    /// A file that cannot be read or used, named with the setting that points at it.
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads the certificate chain and the key, and checks that the key is the leaf
    /// certificate's (a TLS context refuses a pair that does not match).
    public static func check(certificate: String, key: String) throws -> Report {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw Problem(description: "PARLEY_TLS_CERTIFICATE \(certificate) is not a readable PEM certificate")
        }
        guard let leaf = chain.first else {
            throw Problem(description: "PARLEY_TLS_CERTIFICATE \(certificate) holds no certificate")
        }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw Problem(description: "PARLEY_TLS_KEY \(key) is not a readable PEM private key")
        }
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw Problem(
                description: "PARLEY_TLS_KEY \(key) is not the key of PARLEY_TLS_CERTIFICATE \(certificate)")
        }
        return Report(expiresAt: Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter)))
    }
}
