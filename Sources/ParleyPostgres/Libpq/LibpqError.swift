import CLibpq

/// What PostgreSQL (or libpq) said when a statement or a connection failed: the fields psql
/// shows, and where in the script the error is.
public struct LibpqError: Error, Equatable, CustomStringConvertible {
    public var sqlState: String?
    public var message: String
    public var detail: String?
    public var hint: String?
    /// Where inside a function or `DO` block the error arose (PostgreSQL's CONTEXT).
    public var context: String?
    /// Where the error is, counted in characters from 1, in the text that was sent.
    public var position: Int?

    public init(
        message: String, sqlState: String? = nil, detail: String? = nil, hint: String? = nil, context: String? = nil,
        position: Int? = nil
    ) {
        self.message = message
        self.context = context
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.position = position
    }

    init(result: OpaquePointer) {
        // libpq's PG_DIAG_* codes are the field type letters of the protocol's ErrorResponse.
        func field(_ code: Character) -> String? {
            PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
        }
        let whole = String(cString: PQresultErrorMessage(result))
        self.init(
            message: field("M") ?? (whole.isEmpty ? "the statement failed" : whole), sqlState: field("C"),
            detail: field("D"), hint: field("H"), context: field("W"), position: field("P").flatMap { Int($0) })
    }

    /// The line of `script` the error is on (from 1), when PostgreSQL gave a position.
    public func line(in script: String) -> Int? {
        guard let position, position >= 1 else { return nil }
        return script.unicodeScalars.prefix(position - 1).reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    }

    /// As psql prints it.
    public var description: String {
        var text = "ERROR:  \(message)"
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let detail { text += "\nDETAIL:  \(detail)" }
        if let hint { text += "\nHINT:  \(hint)" }
        if let context { text += "\nCONTEXT:  \(context)" }
        return text
    }
}
