# syntax=docker/dockerfile:1
# The API server: compiled JavaScript, production dependencies only, as the unprivileged `node` user.
# Build: docker build -t shipping-platform .    Run the whole stack: infra/compose.yaml (see README).

# 1. Compile (`npm run build` → dist/).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY projections ./projections
COPY schemas ./schemas
RUN npm run build

# 2. Production dependencies only.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

# 3. The image.
FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/var/lib/shipping-platform
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The gazetteer's city index, built now (`npm run gazetteer:index`, compiled) so no container pays for it at start.
RUN node dist/src/cli/gazetteer-index.js \
 && mkdir -p /var/lib/shipping-platform/blobs && chown -R node:node /var/lib/shipping-platform
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `npm run start:dist`, without npm in between (signals reach node directly).
CMD ["node", "dist/src/main.js"]
