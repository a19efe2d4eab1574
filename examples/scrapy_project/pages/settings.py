"""Settings of the example crawl: the simstore pipeline drops pages already seen."""

BOT_NAME = "pages"
SPIDER_MODULES = ["pages.spiders"]

# The pipeline: every page goes through Store.check_and_insert; duplicates are dropped.
ITEM_PIPELINES = {"simstore.scrapy.SimstorePipeline": 300}
SIMSTORE_DB = "pages.db"  # a directory (created if missing) or redis://HOST:PORT,.../NAME
# Near duplicates: by the store's quality mode (within its k_max, and up to 8 bits away when
# the texts' shingle sketches agree). SIMSTORE_K = 3 would count "within 3 bits" instead;
# SIMSTORE_QUALITY = "high" creates the store in the high mode (more copies found, more tables).
# The spider yields {"url", "html"}: with no text field, the pipeline reads the page's title
# and main text from the HTML itself (simstore.extract_page: navigation, ads, footers dropped).
SIMSTORE_HTML_FIELD = "html"
SIMSTORE_URL_FIELD = "url"
# SIMSTORE_ON_DUPLICATE = "tag" would pass duplicates on, tagged with duplicate_of,
# duplicate_kind, duplicate_distance and duplicate_similarity, instead of dropping them.

CONCURRENT_REQUESTS = 16
ROBOTSTXT_OBEY = True
# Duplicates are routine here, not warnings (and the log stays free of page bodies' size).
DEFAULT_DROPITEM_LOG_LEVEL = "INFO"
LOG_LEVEL = "INFO"
