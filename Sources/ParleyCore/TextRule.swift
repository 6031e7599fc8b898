/// Limits on text a client sends, counted as PostgreSQL counts them (code points, not
/// user-perceived characters) and without NUL, which PostgreSQL cannot store: what passes
/// here never fails a database check.
public enum TextRule {
    public static func validated(_ text: String, field: String, length: ClosedRange<Int>) throws -> String {
        let scalars = text.unicodeScalars
        guard length.contains(scalars.count) else {
            throw ParleyError.invalidRequest(
                "\(field) must be \(length.lowerBound) to \(length.upperBound) characters", field: field)
        }
        guard !scalars.contains("\u{0}") else {
            throw ParleyError.invalidRequest("\(field) must not contain NUL characters", field: field)
        }
        return text
    }
}
