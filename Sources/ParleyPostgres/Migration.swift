import Crypto
import Foundation

/// One forward-only SQL file of `Migrations/`, named `NNNN_description.sql`.
public struct Migration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let sql: String
    /// SHA-256 of the file's bytes, hex: an applied migration must never change.
    public let checksum: String

    /// The file's name, `NNNN_description.sql`.
    public var fileName: String {
        "\(String(repeating: "0", count: max(0, 4 - String(version).count)))\(version)_\(name).sql"
    }

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = SHA256.hash(data: Data(sql.utf8)).hexString
    }

    /// Reads every migration of `directory`, ordered by version.
    ///
    /// A file that looks like a migration but is misnamed, or two files with one version,
    /// is an error rather than something silently skipped.
    public static func load(from directory: URL) throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        var migrations: [Migration] = []
        for file in names.sorted() where file.hasSuffix(".sql") {
            guard let match = file.wholeMatch(of: /(\d{4})_([a-z0-9_]+)\.sql/), let version = Int(match.1) else {
                throw MigrationError.badFileName(file)
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            migrations.append(Migration(version: version, name: String(match.2), sql: sql))
        }
        let versions = migrations.map(\.version)
        if let duplicate = versions.first(where: { version in versions.filter { $0 == version }.count > 1 }) {
            throw MigrationError.duplicateVersion(duplicate)
        }
        return migrations
    }
}

/// Why migrations cannot be applied, or why the schema is not the one this build expects.
public enum MigrationError: Error, Equatable, CustomStringConvertible {
    case badFileName(String)
    case duplicateVersion(Int)
    case directoryNotFound(String)
    /// An applied migration's file no longer has the checksum recorded when it was applied.
    case modified(version: Int, name: String)
    /// Migrations exist that the database has not applied.
    case pending([Int])
    /// PostgreSQL refused a migration (nothing of this run was applied): the file, the line
    /// of the error when PostgreSQL gave its position, and what PostgreSQL said.
    case failed(file: String, line: Int?, LibpqError)
    /// A migration ran `COMMIT` or `ROLLBACK`: the migrations before it, and its statements
    /// up to there, may have been committed outside the run's transaction and lock.
    case endedTransaction(file: String)

    public var description: String {
        switch self {
        case .badFileName(let file):
            "migration file \(file) is not named NNNN_description.sql"
        case .duplicateVersion(let version):
            "two migration files have version \(version)"
        case .directoryNotFound(let path):
            "migrations directory not found: \(path) (set PARLEY_MIGRATIONS_DIRECTORY)"
        case .modified(let version, let name):
            "migration \(version) (\(name)) was edited after it was applied; add a new migration instead"
        case .pending(let versions):
            "the database schema is stale: migrations \(versions.map(String.init).joined(separator: ", ")) "
                + "are not applied (run: parley migrate up)"
        case .failed(let file, let line, let error):
            "\(file)\(line.map { ":\($0)" } ?? ""): \(error)\nnothing was applied"
        case .endedTransaction(let file):
            "\(file) ended the migrations' transaction (COMMIT or ROLLBACK); migrations must not: what ran "
                + "before it may be committed without being recorded (check with parley migrate status and the schema)"
        }
    }
}
