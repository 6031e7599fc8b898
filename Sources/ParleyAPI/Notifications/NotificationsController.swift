import Foundation
import Hummingbird
import ParleyCore

/// Push preferences: `/v1/rooms/{id}/notifications` (mute, quiet-hours override) and
/// `/v1/me/quiet-hours`.
public struct NotificationsController: Sendable {
    let rooms: RoomService
    let settings: any NotificationSettingsRepository

    public init(rooms: RoomService, settings: any NotificationSettingsRepository) {
        self.rooms = rooms
        self.settings = settings
    }

    public func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("rooms/:id/notifications") { _, context in
            let roomID = try context.parameters.id("id")
            // Readers only; anyone else learns nothing about the room (404).
            _ = try await rooms.require(.reader, roomID: roomID, userID: context.identity.userID)
            let current = try await settings.roomSettings(roomID: roomID, userID: context.identity.userID)
            return JSONResponse(.ok, RoomNotificationsResponse(current))
        }
        group.put("rooms/:id/notifications") { request, context in
            let roomID = try context.parameters.id("id")
            let body = try await JSONBody.decode(RoomNotificationsRequest.self, from: request, context: context)
            let wanted = try body.settings(now: Date())
            _ = try await rooms.require(.reader, roomID: roomID, userID: context.identity.userID)
            try await settings.setRoomSettings(wanted, roomID: roomID, userID: context.identity.userID)
            return JSONResponse(.ok, RoomNotificationsResponse(wanted))
        }
        group.get("me/quiet-hours") { _, context in
            JSONResponse(.ok, QuietHoursResponse(try await settings.quietHours(userID: context.identity.userID)))
        }
        group.put("me/quiet-hours") { request, context in
            let body = try await JSONBody.decode(QuietHoursRequest.self, from: request, context: context)
            let quietHours = try QuietHours(start: body.start, end: body.end, timeZone: body.timeZone)
            try await settings.setQuietHours(quietHours, userID: context.identity.userID)
            return JSONResponse(.ok, QuietHoursResponse(quietHours))
        }
        group.delete("me/quiet-hours") { _, context in
            try await settings.setQuietHours(nil, userID: context.identity.userID)
            return Response(status: .noContent)
        }
    }
}
