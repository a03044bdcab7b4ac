"""UI strings of the virtual phone in its second language (German).

English text is the key; ``translate`` returns the German string, or the English one
when no translation exists (like an app with incomplete localisation).  Data only.
"""

from __future__ import annotations

LANGUAGES = ("en", "de")

DE: dict[str, str] = {
    # system
    "Search": "Suchen", "Undo": "Rückgängig", "Search apps": "Apps suchen", "No apps found": "Keine Apps gefunden", "Home": "Startbildschirm",
    "Clear all": "Alle löschen", "No recent items": "Keine kürzlich verwendeten Elemente", "Overview": "Übersicht",
    "18°C  Mostly sunny": "18 °C  Überwiegend sonnig", "Navigate up": "Nach oben", "ON": "AN", "OFF": "AUS",
    "Cancel": "Abbrechen", "OK": "OK", "Save": "Speichern", "Delete": "Löschen", "Done": "Fertig", "Set": "Festlegen",
    "Connect": "Verbinden", "Rename": "Umbenennen", "Pair": "Koppeln", "Back": "Zurück", "More options": "Weitere Optionen",
    "Sponsored": "Gesponsert", "Install": "Installieren", "Close ad": "Werbung schließen",
    # app names
    "Settings": "Einstellungen", "Clock": "Uhr", "Contacts": "Kontakte", "Messages": "Nachrichten", "Notes": "Notizen",
    "Shop": "Shop", "Calendar": "Kalender", "Files": "Dateien",
    # settings
    "Search settings": "Einstellungen durchsuchen", "Network & internet": "Netzwerk & Internet",
    "Mobile": "Mobilfunk", "hotspot": "Hotspot", "Connected devices": "Verbundene Geräte",
    "Bluetooth, pairing": "Bluetooth, Kopplung", "Apps": "Apps", "Recent apps, default apps": "Zuletzt verwendete Apps, Standard-Apps",
    "Notifications": "Benachrichtigungen", "Notification history, conversations": "Benachrichtigungsverlauf, Unterhaltungen",
    "Battery": "Akku", "Storage": "Speicher", "Sound & vibration": "Ton & Vibration",
    "Volume, haptics, Do Not Disturb": "Lautstärke, haptisches Feedback, Bitte nicht stören", "Display": "Display",
    "Dark theme, font size, brightness": "Dunkles Design, Schriftgröße, Helligkeit",
    "Wallpaper & style": "Hintergrund & Stil", "Colors, themed icons, app grid": "Farben, Designsymbole, App-Raster",
    "Accessibility": "Bedienungshilfen", "Display, interaction, audio": "Display, Interaktion, Audio",
    "Security & privacy": "Sicherheit & Datenschutz", "App security, device lock": "App-Sicherheit, Displaysperre",
    "Location": "Standort", "System": "System", "Languages, gestures, time, backup": "Sprachen, Gesten, Zeit, Sicherung",
    "About phone": "Über das Telefon", "Internet": "Internet", "SIMs": "SIMs", "Airplane mode": "Flugmodus",
    "Hotspot & tethering": "Hotspot & Tethering", "Data Saver": "Datensparmodus", "Private DNS": "Privates DNS",
    "Automatic": "Automatisch", "Off": "Aus", "On": "An", "Not connected": "Nicht verbunden", "Connected": "Verbunden",
    "Mobile data": "Mobile Daten", "Access data using mobile network": "Datenzugriff über Mobilfunknetz",
    "Roaming": "Roaming", "Connect to data services when roaming": "Bei Roaming Verbindung zu Datendiensten herstellen",
    "App data usage": "Datennutzung durch Apps", "Data warning & limit": "Datenwarnung & -limit",
    "Preferred network type": "Bevorzugter Netzwerktyp", "Phone number": "Telefonnummer",
    "Wi‑Fi hotspot": "WLAN-Hotspot", "Wi‑Fi": "WLAN", "Add network": "Netzwerk hinzufügen",
    "Saved networks": "Gespeicherte Netzwerke", "Saved": "Gespeichert", "Password": "Passwort",
    "To see available networks, turn Wi‑Fi on.": "WLAN aktivieren, um verfügbare Netzwerke zu sehen.",
    "Forget": "Entfernen", "Status": "Status", "Signal strength": "Signalstärke", "Frequency": "Frequenz",
    "Security": "Sicherheit", "IP address": "IP-Adresse", "Pair new device": "Neues Gerät koppeln",
    "Device name": "Gerätename", "Saved devices": "Gespeicherte Geräte",
    "Connection preferences": "Verbindungseinstellungen", "Available devices": "Verfügbare Geräte",
    "Device details": "Gerätedetails", "Phone calls": "Telefonanrufe", "Media audio": "Medien-Audio",
    "Rename this device": "Gerät umbenennen", "Brightness": "Helligkeit", "Brightness level": "Helligkeit",
    "Adaptive brightness": "Automatische Helligkeit", "Optimize brightness for light": "Helligkeit an Licht anpassen",
    "Lock display": "Sperrbildschirm", "Screen timeout": "Display automatisch ausschalten", "Appearance": "Darstellung",
    "Dark theme": "Dunkles Design", "Use a dark background": "Dunklen Hintergrund verwenden", "Font size": "Schriftgröße",
    "Display size and text": "Anzeigegröße und Text", "Other display controls": "Weitere Displayeinstellungen",
    "Screen saver": "Bildschirmschoner", "Auto-rotate screen": "Automatisch drehen", "Small": "Klein",
    "Default": "Standard", "Large": "Groß", "Largest": "Am größten", "Media volume": "Medienlautstärke",
    "Ring & notification volume": "Klingel- & Benachrichtigungslautstärke", "Do Not Disturb": "Bitte nicht stören",
    "Vibrate for calls": "Bei Anrufen vibrieren", "Phone ringtone": "Klingelton",
    "Default notification sound": "Standard-Benachrichtigungston", "Default alarm sound": "Standard-Weckton",
    "Live Caption": "Automatische Untertitel", "App notifications": "App-Benachrichtigungen",
    "Control notifications from individual apps": "Benachrichtigungen einzelner Apps verwalten",
    "Notification history": "Benachrichtigungsverlauf", "Privacy": "Datenschutz",
    "Notifications on lock screen": "Benachrichtigungen auf dem Sperrbildschirm", "General": "Allgemein",
    "Notification dot on app icon": "App-Symbol-Kennzeichen", "Show all notifications": "Alle Benachrichtigungen anzeigen",
    "Hide silent notifications": "Lautlose Benachrichtigungen ausblenden",
    "Don't show any notifications": "Keine Benachrichtigungen anzeigen", "Color and motion": "Farbe und Bewegung",
    "Color inversion": "Farbumkehr", "Turn light screens dark and dark screens light": "Helle Bildschirme dunkel und dunkle hell darstellen",
    "Extra dim": "Extradunkel", "Interaction controls": "Interaktionssteuerung", "Magnification": "Vergrößerung",
    "Zoom in on the screen": "Bildschirm vergrößern", "Remove animations": "Animationen entfernen",
    "Reduce movement on the screen": "Bewegung auf dem Bildschirm reduzieren", "Timing controls": "Zeitsteuerung",
    "Battery Saver": "Energiesparmodus", "Battery percentage": "Akkustand in Prozent", "Battery usage": "Akkunutzung",
    "Use location": "Standort verwenden", "Recent access": "Letzte Zugriffe", "Languages": "Sprachen",
    "Keyboard": "Tastatur", "Gestures": "Gesten", "Date & time": "Datum & Uhrzeit", "Backup": "Sicherung",
    "Reset options": "Optionen zum Zurücksetzen", "Emergency information": "Notfallinformationen",
    "Legal information": "Rechtliche Hinweise", "Regulatory labels": "Zulassungszeichen", "Model": "Modell",
    "Android version": "Android-Version", "Build number": "Build-Nummer", "Up time": "Betriebszeit",
    "Legal & regulatory": "Rechtliches", "App info": "App-Info", "Permissions": "Berechtigungen",
    "Force stop": "Beenden erzwingen", "Notifications ": "Benachrichtigungen", "No results": "Keine Ergebnisse",
    "Recently opened apps": "Zuletzt geöffnete Apps",
}


_DAYS_DE = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]
_MONTHS_DE = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
              "November", "Dezember"]


def format_date(d, lang: str, style: str = "long") -> str:
    """A date as the phone shows it: ``long`` (Thursday, March 12), ``short``
    (Thu, Mar 12, 2026)."""
    if lang == "de":
        if style == "short":
            return f"{_DAYS_DE[d.weekday()][:2]}., {d.day}. {_MONTHS_DE[d.month - 1][:3]}. {d.year}"
        return f"{_DAYS_DE[d.weekday()]}, {d.day}. {_MONTHS_DE[d.month - 1]}"
    if style == "short":
        return d.strftime("%a, %b %-d, %Y")
    return d.strftime("%A, %B %-d")


def translate(text: str, lang: str) -> str:
    if lang == "en" or not text:
        return text
    return DE.get(text, text)

DE.update({
    "Alarm": "Wecker", "Timer": "Timer", "Stopwatch": "Stoppuhr", "Bedtime": "Schlafenszeit", "Alarms": "Wecker",
    "No alarms": "Keine Wecker", "Add alarm": "Wecker hinzufügen", "Add label": "Label hinzufügen", "Label": "Label",
    "Vibrate": "Vibration", "Tomorrow": "Morgen", "Not scheduled": "Nicht geplant", "Select time": "Uhrzeit auswählen",
    "Alarm sound": "Weckton", "Device sounds": "Gerätetöne", "Add city": "Stadt hinzufügen",
    "Search for a city": "Nach einer Stadt suchen", "Today": "Heute", "Start": "Starten", "Pause": "Pausieren",
    "Lap": "Runde", "Reset": "Zurücksetzen", "Bedtime schedule": "Schlafenszeitplan",
    "Get reminders and wind down": "Erinnerungen erhalten und zur Ruhe kommen", "Wake-up": "Aufwachen",
    "Alarm deleted": "Wecker gelöscht", "Style": "Stil", "Digital": "Digital", "Silence after": "Stummschalten nach",
    "Snooze length": "Schlummerdauer",
})

DE.update({
    "Search contacts": "Kontakte suchen", "Favorites": "Favoriten", "All contacts": "Alle Kontakte",
    "Create contact": "Kontakt erstellen", "Edit contact": "Kontakt bearbeiten", "First name": "Vorname",
    "Last name": "Nachname", "Phone": "Telefon", "Email": "E-Mail", "Call": "Anrufen", "Text": "SMS",
    "Video": "Video", "Contact info": "Kontaktdaten", "Mobile ": "Mobil", "Add to favorites": "Zu Favoriten hinzufügen",
    "Remove from favorites": "Aus Favoriten entfernen", "Delete this contact?": "Diesen Kontakt löschen?",
    "Share": "Teilen", "Contact saved": "Kontakt gespeichert", "Contact deleted": "Kontakt gelöscht",
    "No contacts found": "Keine Kontakte gefunden", "Start chat": "Chat starten", "New conversation": "Neue Unterhaltung",
    "To": "An", "Type names, phone numbers or emails": "Namen, Telefonnummern oder E-Mails eingeben",
    "Text message": "SMS-Nachricht", "Send SMS": "SMS senden", "You": "Ich", "Conversations": "Unterhaltungen",
    "Delete this conversation?": "Diese Unterhaltung löschen?", "Conversation deleted": "Unterhaltung gelöscht",
    "Search conversations": "Unterhaltungen durchsuchen", "Video call": "Videoanruf",
    "Show attach options": "Anhangsoptionen anzeigen",
})

DE.update({
    "Search your notes": "Notizen durchsuchen", "New list": "Neue Liste", "New text note": "Neue Textnotiz",
    "New drawing note": "Neue Zeichnung", "New note with image": "Neue Notiz mit Bild", "Title": "Titel",
    "Note": "Notiz", "List item": "Listenelement", "Delete note": "Notiz löschen", "Pin": "Anpinnen",
    "Unpin": "Loslösen", "Edited just now": "Gerade eben bearbeitet", "Note deleted": "Notiz gelöscht",
    "Notes you add appear here": "Hinzugefügte Notizen werden hier angezeigt",
})

DE.update({
    "Search products": "Produkte suchen", "Categories": "Kategorien", "All": "Alle", "Audio": "Audio",
    "Accessories": "Zubehör", "Household": "Haushalt", "Wearables": "Wearables", "Sports": "Sport", "Popular right now": "Gerade beliebt",
    "Shop now": "Jetzt shoppen", "Recent searches": "Letzte Suchanfragen", "Results": "Ergebnisse",
    "results": "Ergebnisse", "No products found": "Keine Produkte gefunden", "Quantity": "Menge",
    "Add to cart": "In den Warenkorb", "Buy now": "Jetzt kaufen", "About this item": "Über diesen Artikel",
    "Add to wishlist": "Zur Wunschliste", "Remove from wishlist": "Von der Wunschliste entfernen",
    "Added to wishlist": "Zur Wunschliste hinzugefügt", "Added to cart": "Zum Warenkorb hinzugefügt",
    "Cart": "Warenkorb", "Your cart is empty": "Dein Warenkorb ist leer", "Subtotal": "Zwischensumme",
    "Checkout": "Zur Kasse", "Decrease quantity": "Menge verringern", "Increase quantity": "Menge erhöhen",
    "Remove": "Entfernen", "Removed from cart": "Aus dem Warenkorb entfernt", "Shipping address": "Lieferadresse",
    "Full name": "Vollständiger Name", "Street address": "Straße und Hausnummer", "City": "Stadt",
    "Payment method": "Zahlungsart", "Credit card": "Kreditkarte", "Cash on delivery": "Nachnahme",
    "Order total": "Gesamtsumme", "Place order": "Bestellung aufgeben", "Thank you!": "Vielen Dank!",
    "Order": "Bestellung", "placed": "aufgegeben", "Continue shopping": "Weiter einkaufen",
    "Please fill in the shipping address": "Bitte die Lieferadresse ausfüllen",
})

DE.update({
    "January": "Januar", "February": "Februar", "March": "März", "April": "April", "May": "Mai", "June": "Juni",
    "July": "Juli", "August": "August", "September": "September", "October": "Oktober", "November": "November",
    "December": "Dezember", "Next month": "Nächster Monat", "Previous month": "Vorheriger Monat",
    "Jump to today": "Zu heute springen", "All day": "Ganztägig", "No events": "Keine Termine",
    "Create event": "Termin erstellen", "Add title": "Titel hinzufügen", "All-day": "Ganztägig",
    "Does not repeat": "Einmalig", "30 minutes before": "30 Minuten vorher", "Select date": "Datum auswählen",
    "Event saved": "Termin gespeichert", "Delete this event?": "Diesen Termin löschen?", "Delete event": "Termin löschen",
    "Edit event": "Termin bearbeiten", "Event deleted": "Termin gelöscht", "Categories ": "Kategorien",
    "Downloads": "Downloads", "Images": "Bilder", "Documents": "Dokumente", "Videos": "Videos", "items": "Elemente",
    "Storage devices": "Speichergeräte", "Internal storage": "Interner Speicher", "Trash": "Papierkorb",
    "New folder": "Neuer Ordner", "Folder name": "Ordnername", "Sort by": "Sortieren nach", "No items": "Keine Elemente",
    "File name": "Dateiname", "Moved to trash": "In den Papierkorb verschoben",
})
