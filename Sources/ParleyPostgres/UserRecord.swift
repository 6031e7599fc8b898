import Foundation
import ParleyCore

/// The columns of a user every query selects, with the avatar's file as one JSON column,
/// and the ``User`` they make.
enum UserRecord {
    /// `alias` is the query's alias of `cloud.user_account`.
    static func columns(_ alias: String) -> String {
        """
        \(alias).id, \(alias).email, \(alias).first_name, \(alias).last_name, \(alias).is_admin, \(alias).created_at,
        (SELECT \(FileRecord.json) FROM cloud.file f WHERE f.id = \(alias).avatar_file_id)
        """
    }

    typealias Row = (Int64, String, String, String, Bool, Date, String?)

    static func user(_ row: Row, links: FileLinks) throws -> User {
        User(
            id: row.0, email: row.1, firstName: row.2, lastName: row.3, isAdmin: row.4, createdAt: row.5,
            avatar: try row.6.map { links.object(try FileRecord.decode($0)) })
    }
}
