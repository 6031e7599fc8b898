import Foundation
import Hummingbird
import ParleyCore

/// `/v1/rooms/{id}/messages/{messageId}...`: edits, deletion, reactions and threads (the
/// `changedSince` listing is history's, in ``RoomsController``).
public struct MessageActionsController: Sendable {
    let service: MessageActionService

    public init(service: MessageActionService) { self.service = service }

    public func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.patch("rooms/:id/messages/:messageId") { request, context in
            let body = try await JSONBody.decode(
                EditMessageBody.self, from: request, context: context, limit: JSONBody.messageLimit)
            let message = try await service.edit(
                roomID: try context.parameters.id("id"), messageID: try context.parameters.id("messageId"),
                content: body.content, mentions: body.mentions, metadata: body.metadata, by: context.identity.userID)
            return JSONResponse(.ok, message)
        }
        group.delete("rooms/:id/messages/:messageId") { _, context in
            try await service.delete(
                roomID: try context.parameters.id("id"), messageID: try context.parameters.id("messageId"),
                by: context.identity.userID)
            return Response(status: .noContent)
        }
        group.put("rooms/:id/messages/:messageId/reactions/:key") { _, context in
            try await service.react(
                roomID: try context.parameters.id("id"), messageID: try context.parameters.id("messageId"),
                key: try context.parameters.reactionKey(), by: context.identity.userID)
            return Response(status: .noContent)
        }
        group.delete("rooms/:id/messages/:messageId/reactions/:key") { _, context in
            try await service.unreact(
                roomID: try context.parameters.id("id"), messageID: try context.parameters.id("messageId"),
                key: try context.parameters.reactionKey(), by: context.identity.userID)
            return Response(status: .noContent)
        }
        group.get("rooms/:id/messages/:messageId/reactions/:key") { request, context in
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let users = try await service.reactors(
                roomID: try context.parameters.id("id"), messageID: try context.parameters.id("messageId"),
                key: try context.parameters.reactionKey(), for: context.identity.userID, after: try paging.idCursor(),
                limit: paging.readLimit)
            return JSONResponse(
                .ok, paging.page(users.map { UserResponse($0, to: context.identity) }) { String($0.id) })
        }
        group.get("rooms/:id/messages/:messageId/replies") { request, context in
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let (messages, hasMore) = try await service.replies(
                roomID: try context.parameters.id("id"), messageID: try context.parameters.id("messageId"),
                for: context.identity.userID, after: try Self.after(request), limit: paging.limit)
            return JSONResponse(
                .ok,
                MessagesResponse(
                    messages: messages, hasMore: hasMore, nextCursor: hasMore ? messages.last.map { "\($0.seq)" } : nil)
            )
        }
    }

    /// A thread's lower bound: `after` (a `seq`) or the `cursor` a page gave.
    static func after(_ request: Request) throws -> Int64? {
        let after = try request.seq(query: "after")
        let cursor = try request.seq(query: "cursor")
        guard after == nil || cursor == nil else {
            throw ParleyError.invalidRequest("cursor stands instead of after", field: "cursor")
        }
        return after ?? cursor
    }

    /// `changedSince`'s page of history: messages in the order they changed.
    static func changes(
        _ request: Request, since: Date, roomID: Int64, service: MessageActionService, userID: Int64
    ) async throws -> MessagesResponse {
        let params = request.uri.queryParameters
        for name in ["before", "after", "since", "until"] where params[name[...]] != nil {
            throw ParleyError.invalidRequest("changedSince pages by cursor alone", field: name)
        }
        let paging = try Paging(request, defaultLimit: 50, maximum: 200)
        let cursor = try paging.cursor.map { text in
            guard let cursor = ChangeCursor(text: text) else { throw ParleyError.foreignCursor }
            return cursor
        }
        let (messages, next) = try await service.changes(
            roomID: roomID, since: since, after: cursor, limit: paging.limit, for: userID)
        return MessagesResponse(messages: messages, hasMore: next != nil, nextCursor: next?.text)
    }
}

extension ChangeCursor {
    /// `<microseconds>-<id>`, the time within what PostgreSQL's timestamps hold (to 9999).
    init?(text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let micros = Int64(parts[0]), (0...253_402_300_799_999_999).contains(micros),
            let id = Int64(parts[1]), id > 0
        else { return nil }
        self.init(changedAtMicros: micros, messageID: id)
    }

    var text: String { "\(changedAtMicros)-\(messageID)" }
}

extension Parameters {
    /// A reaction's key, percent-decoded from its path segment.
    func reactionKey() throws -> String {
        guard let raw = get("key"), let key = raw.removingPercentEncoding else {
            throw ParleyError.invalidRequest("key must be one emoji or a :shortcode:", field: "key")
        }
        return key
    }
}
