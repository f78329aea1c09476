"""Version of the SDK, reported to the referee in ``BotInfo.sdk_version``."""

__version__ = "0.1.0"
SDK_VERSION = f"arena-sdk {__version__}"
