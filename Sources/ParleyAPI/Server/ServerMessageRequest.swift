import Foundation
import ParleyCore

/// `POST /v1/server/rooms/{id}/messages`: a message's fields (``NewMessage``) and who says
/// it: one of the app's users by `{"externalId"}`, or `"system"` for a room notice, whose type
/// is `system` and which carries text and metadata only; a bot's key names no one (nil): the
/// bot says it.
struct ServerMessageRequest: Decodable {
    enum Sender: Equatable {
        case system
        case user(externalId: String)
    }

    let sentBy: Sender?
    let message: NewMessage

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        if !container.contains(.sentBy) {
            sentBy = nil
            message = try NewMessage(from: decoder)
        } else if let word = try? container.decode(String.self, forKey: .sentBy) {
            guard word == "system" else {
                throw ParleyError.invalidRequest(#"sentBy is {"externalId": "…"} or "system""#, field: "sentBy")
            }
            sentBy = .system
            for key in [Keys.fileId, .attachments, .replyToId, .mentions] where container.contains(key) {
                throw ParleyError.invalidRequest(
                    "a system message carries no \(key.stringValue)", field: key.stringValue)
            }
            if let type = try container.decodeIfPresent(String.self, forKey: .type), type != "system" {
                throw ParleyError.invalidRequest("a message sentBy system has type system", field: "type")
            }
            message = try NewMessage.notice(
                content: try container.decodeIfPresent(String.self, forKey: .content) ?? "",
                uid: try container.decodeIfPresent(String.self, forKey: .uid) ?? "",
                metadata: try container.decodeIfPresent(MessageMetadata.self, forKey: .metadata))
        } else {
            guard let user = try? container.decode(UserReference.self, forKey: .sentBy) else {
                throw ParleyError.invalidRequest(#"sentBy is {"externalId": "…"} or "system""#, field: "sentBy")
            }
            sentBy = .user(externalId: user.externalId)
            message = try NewMessage(from: decoder)
        }
    }

    private struct UserReference: Decodable {
        let externalId: String
    }

    private enum Keys: String, CodingKey {
        case sentBy, content, uid, type, metadata, fileId, attachments, replyToId, mentions
    }
}
